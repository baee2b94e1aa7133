// The schema documents and instances on which our verdicts must equal the reference's (issue 33
// item 7): decimals at numeric bounds, multipleOf with decimal divisors, exact integer/const/enum/
// uniqueItems, each regular-expression feature where JavaScript and Go (RE2) part, `.` and `\s` on
// Unicode and newlines, and references without a scheme under the `urn:` base. Every text is written
// out, so a number keeps its lexeme (JSON.stringify would print 8.0000000000000001 as 8).

export interface SchemaCase {
  /** What the case is about, for a difference's message. */
  name: string;
  /** The authored schema document (JSON text). */
  document: string;
  /** Instances (JSON texts), judged when the document compiles. */
  instances: string[];
}

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** A closed root object with these properties (JSON text of the members) and extra root members. */
const closed = (properties: string, extra = ''): string =>
  `{"$schema":"${DIALECT}","type":"object","additionalProperties":false,"properties":{${properties}}${extra}}`;

/** A document whose member `n` is a number under `keyword: lexeme`. */
const numeric = (keyword: string, lexeme: string): string => closed(`"n":{"type":"number","${keyword}":${lexeme}}`);
/** Instances `{"n": lexeme}`. */
const ns = (...lexemes: string[]): string[] => lexemes.map((l) => `{"n":${l}}`);

/** A document whose member `s` is a string matching `pattern`. */
const pattern = (p: string): string => closed(`"s":{"type":"string","pattern":${JSON.stringify(p)}}`);
/** Instances `{"s": text}`. */
const ss = (...texts: string[]): string[] => texts.map((t) => `{"s":${JSON.stringify(t)}}`);

const numbers: SchemaCase[] = [
  {
    name: 'maximum 8',
    document: numeric('maximum', '8'),
    instances: ns('8', '8.0000000000000001', '8.000000000000001', '7.9999999999999999', '80e-1', '1e400', '-1e400'),
  },
  { name: 'minimum 8', document: numeric('minimum', '8'), instances: ns('7.9999999999999999', '8', '8.0000000000000001', '0.8e1', '-1e400') },
  {
    name: 'exclusiveMaximum 0.3',
    document: numeric('exclusiveMaximum', '0.3'),
    instances: ns('0.30000000000000001', '0.29999999999999999', '0.3', '3e-1', '0.2999999999999999999999'),
  },
  { name: 'exclusiveMinimum 0', document: numeric('exclusiveMinimum', '0'), instances: ns('1e-400', '0', '-0', '-1e-400', '0.0') },
  {
    name: 'maximum 2^53',
    document: numeric('maximum', '9007199254740992'),
    instances: ns('9007199254740993', '9007199254740992.5', '9007199254740992', '9007199254740991'),
  },
  { name: 'minimum 1e-400', document: numeric('minimum', '1e-400'), instances: ns('0', '1e-401', '2e-400', '1E-400') },
  {
    name: 'maximum 1.0000000000000001 (a float 1)',
    document: numeric('maximum', '1.0000000000000001'),
    instances: ns('1', '1.0000000000000001', '1.00000000000000011'),
  },
  { name: 'maximum 8 against an exponent beyond big.Rat', document: numeric('maximum', '8'), instances: ns('1e1000001', '1e-1000001', '0e1000001') },
  { name: 'multipleOf 0.01', document: numeric('multipleOf', '0.01'), instances: ns('19.99', '0.07', '1.005', '1e400', '-0.3', '0.29', '1e-2', '0.001') },
  { name: 'multipleOf 0.1', document: numeric('multipleOf', '0.1'), instances: ns('0.3', '0.7', '1e-1', '0.15', '3') },
  { name: 'multipleOf 1.5', document: numeric('multipleOf', '1.5'), instances: ns('4.5', '3', '2.25', '4.50', '-1.5e3') },
  { name: 'multipleOf 1e-400', document: numeric('multipleOf', '1e-400'), instances: ns('1', '1e-400', '1.5e-400', '3e-399') },
  {
    name: 'type integer',
    document: closed('"n":{"type":"integer"}'),
    instances: ns('1.0', '1.0000000000000001', '1e400', '9007199254740993.5', '1.5e1', '1e-400', '-0', '1e1000001'),
  },
  { name: 'const 0.1', document: closed('"n":{"const":0.1}'), instances: ns('0.1', '0.10000000000000001', '1e-1', '0.100') },
  {
    name: 'enum of numbers',
    document: closed('"n":{"enum":[1,0.1,9007199254740993]}'),
    instances: ns('1.0', '0.10000000000000001', '9007199254740992', '9007199254740993'),
  },
  {
    name: 'uniqueItems',
    document: closed('"a":{"type":"array","uniqueItems":true}'),
    instances: [
      '{"a":[1,1.0]}',
      '{"a":[0.1,0.10000000000000001]}',
      '{"a":[{"x":1},{"x":1e0}]}',
      '{"a":[9007199254740992,9007199254740993]}',
      '{"a":[[1,2],[1,2.0]]}',
    ],
  },
  {
    name: 'const object',
    document: closed('"c":{"const":{"a":[1,2.50]}}'),
    instances: ['{"c":{"a":[1.0,2.5]}}', '{"c":{"a":[1,2.5000000000000001]}}', '{"c":{"a":[1,2.5],"b":0}}'],
  },
];

const regexes: SchemaCase[] = [
  // JavaScript-only syntax: RE2 refuses it, so the document does not compile.
  { name: 'lookahead', document: pattern('^(?=a)a$'), instances: ss('a') },
  { name: 'negative lookahead', document: pattern('^(?!b)a'), instances: ss('a') },
  { name: 'lookbehind', document: pattern('(?<=a)b'), instances: ss('ab') },
  { name: 'negative lookbehind', document: pattern('(?<!x)y'), instances: ss('y') },
  { name: 'backreference', document: pattern('^(a)\\1$'), instances: ss('aa') },
  { name: 'named backreference', document: pattern('^(?<n>a)\\k<n>$'), instances: ss('aa') },
  { name: '\\cA control escape', document: pattern('\\cA'), instances: ss('a') },
  { name: '\\u escape', document: pattern('^\\u0041$'), instances: ss('A') },
  { name: 'repeat count over 1000', document: pattern('^a{1001}$'), instances: ss('a') },
  { name: 'possessive quantifier', document: pattern('a++'), instances: ss('a') },
  // RE2-only syntax: JavaScript refuses it.
  { name: '(?i) flag', document: pattern('^(?i)abc$'), instances: ss('ABC', 'abd', 'aBc') },
  { name: '(?s) flag', document: pattern('^(?s).$'), instances: ss('\n', 'a') },
  { name: '(?m) flag', document: pattern('(?m)^b$'), instances: ss('a\nb', 'ab') },
  { name: '(?P<name>) group', document: pattern('^(?P<n>a+)$'), instances: ss('aa', 'b') },
  { name: '(?<name>) group', document: pattern('^(?<n>a+)$'), instances: ss('aa', 'b') },
  { name: '\\z end of text', document: pattern('^a\\z'), instances: ss('a', 'a\n') },
  { name: '\\A start of text', document: pattern('\\Aa'), instances: ss('a', 'ba') },
  { name: '[[:alpha:]] class', document: pattern('^[[:alpha:]]+$'), instances: ss('abc', 'ab1', 'é') },
  { name: '\\x{…} escape', document: pattern('^\\x{41}\\x{1F600}$'), instances: ss('A😀', 'A') },
  { name: '\\Q…\\E quoting', document: pattern('^\\Qa.b\\E$'), instances: ss('a.b', 'axb') },
  { name: '\\pL class', document: pattern('^\\pL+$'), instances: ss('é', 'α', '1') },
  { name: '\\p{Greek} class', document: pattern('^\\p{Greek}$'), instances: ss('α', 'a') },
  { name: '[\\d-z] class', document: pattern('^[\\d-z]$'), instances: ss('-', '5', 'y') },
  { name: 'repeat count of 1000', document: pattern('^a{1000}$'), instances: ss('a', 'a'.repeat(1000)) },
  // Both accept the syntax; the matching differs.
  { name: '. on newlines and Unicode', document: pattern('^.$'), instances: ss('\n', '\r', '\u2028', '\u2029', '😀', 'é', '\u0000') },
  { name: '\\s on Unicode spaces', document: pattern('^\\s+$'), instances: ss('\u00a0', '\u000b', '\u2003', '\ufeff', '\u0085', '\t\n\f\r ') },
  { name: '\\S on Unicode spaces', document: pattern('^\\S$'), instances: ss('\u00a0', '\u000b', 'a') },
  { name: '\\w, \\d and \\b are ASCII', document: pattern('^\\w\\d$|\\bé'), instances: ss('é٣', 'a1', 'é', ' é') },
  { name: '$ before a final newline', document: pattern('^a$'), instances: ss('a\n', 'a') },
  { name: 'case folding', document: pattern('(?i)^k$'), instances: ss('\u212a', 'K') },
  {
    name: 'patternProperties in RE2 syntax',
    document: closed('', ',"patternProperties":{"^(?i)x\\\\z":{"type":"string"}}'),
    instances: ['{"X":"a"}', '{"X":1}', '{"x\\n":"a"}'],
  },
  { name: 'patternProperties with a lookahead', document: closed('', ',"patternProperties":{"^(?=x)":{"type":"string"}}'), instances: ['{"x":"a"}'] },
];

const references: SchemaCase[] = [
  // A document claiming the meta-schema's id, that does not compile: every later document must still compile.
  { name: "the meta-schema's $id, not compiling", document: closed('"a":{"type":"string","pattern":"(?=a)"}', `,"$id":"${DIALECT}"`), instances: [] },
  { name: "the meta-schema's $id", document: closed('"a":{"type":"string"}', `,"$id":"${DIALECT}"`), instances: ['{}', '{"a":1}'] },
  { name: 'relative $ref names the document', document: closed('"r":{"$ref":"other.json"}'), instances: ['{}', '{"r":1}', '{"r":{}}', '{"r":{"r":{}}}'] },
  {
    name: 'relative $ref with a pointer',
    document: closed('"r":{"$ref":"other.json#/$defs/x"}', ',"$defs":{"x":{"type":"string"}}'),
    instances: ['{"r":"a"}', '{"r":1}'],
  },
  { name: 'relative $ref to a missing pointer', document: closed('"r":{"$ref":"other.json#/$defs/none"}'), instances: ['{}'] },
  { name: 'relative $ref at the root', document: closed('', ',"$ref":"other.json"'), instances: ['{}'] },
  { name: 'relative $id of a subschema', document: closed('"r":{"$id":"sub.json","type":"string"}'), instances: ['{}'] },
  { name: 'relative root $id', document: closed('"r":{"$ref":"other.json"}', ',"$id":"root.json"'), instances: ['{"r":{}}', '{"r":1}'] },
  {
    name: 'absolute root $id referenced',
    document: closed('"r":{"$ref":"https://schemas.test/s"}', ',"$id":"https://schemas.test/s"'),
    instances: ['{"r":{}}', '{"r":1}'],
  },
  { name: 'remote $ref', document: closed('"r":{"$ref":"https://schemas.test/remote.json"}'), instances: ['{}'] },
];

export const SCHEMA_CORPUS: readonly SchemaCase[] = [...numbers, ...regexes, ...references];
