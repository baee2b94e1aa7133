package main

import (
	"fmt"
	"strings"
)

func inputs() []input {
	var all []input
	add := func(id, note, text string) { all = append(all, input{id: id, text: text, note: note}) }

	// Escaping (R11).
	add("esc-01", "html characters", `{"a":"<b>&amp;</b>"}`)
	add("esc-02", "escaped solidus is decoded, written raw", `{"a":"\/x\/"}`)
	add("esc-03", "DEL raw and escaped: written raw", "{\"a\":\"\x7f\\u007f\"}")
	add("esc-04", "short escapes", `{"a":"\b\f\n\r\t\"\\"}`)
	var ctl strings.Builder
	for c := 0; c < 0x20; c++ {
		fmt.Fprintf(&ctl, "\\u%04X", c)
	}
	add("esc-05", "every control character, escaped upper-case in the input", `{"a":"`+ctl.String()+`"}`)
	add("esc-06", "U+2028 U+2029 raw", "{\"a\":\"x\u2028y\u2029z\"}")
	add("esc-07", "U+2028 U+2029 escaped", `{"a":"x\u2028y\u2029z"}`)
	add("esc-08", "non-ASCII escaped in the input is written raw", `{"a":"\u00e9\u00E9\u4e2d\uFFFF\uFEFF"}`)
	add("esc-09", "surrogate pair escaped and raw", "{\"a\":\"\\ud83d\\ude00\U0001F600\\uD83D\\uDE00\"}")
	add("esc-10", "escaped backslash before ud800 is text", `{"a":"\\ud800"}`)
	add("esc-11", "html and escapes in member names", `{"<a>&\n":1,"\u2028":2}`)
	add("esc-12", "escaped characters that need no escape", `{"\u0041\u0062":"\u0063\u0020"}`)
	add("esc-13", "NUL escaped", `["\u0000"]`)
	add("esc-14", "raw non-ASCII of every UTF-8 length", "[\"\u00e9\u0800\uffff\U00010000\U0010FFFF\"]")

	// Member order (R9).
	add("ord-01", "simple sort", `{"b":1,"a":2,"c":3}`)
	add("ord-02", "astral vs BMP: U+FB01 before U+1F600 in UTF-8 order", `{"\ud83d\ude00":1,"\ufb01":2}`)
	add("ord-03", "U+E000 before U+10000 (UTF-16 order is the reverse)", "{\"\U00010000\":1,\"\ue000\":2,\"\uffff\":3}")
	add("ord-04", "prefixes, case, empty name", `{"ab":1,"a":2,"":3,"B":4,"b":5,"A":6}`)
	add("ord-05", "nested objects sorted, arrays keep order", `{"z":[{"y":1,"x":2},{"b":[3,2,1],"a":null}],"a":{"d":{"f":1,"e":2}}}`)
	add("ord-06", "escaped names sort by their unescaped text", `{"\u0062":1,"a":2,"\u00e9":3,"\u007f":4}`)
	add("ord-07", "digits and punctuation", `{"10":1,"9":2,"1":3,"-":4,"_":5,"~":6}`)

	// Numbers (R10).
	add("num-01", "lexemes verbatim", `[1.0,-0,1E+2,1e400,1e-400,123456789012345678901234567890,0.0e-0,-1.5E-3,9007199254740993]`)
	add("num-02", "integers and zero", `{"a":0,"b":-1,"c":9007199254740991,"d":100}`)
	add("num-03", "exponent forms", `[1e5,1E5,1e+5,1e-5,1.25e05,-0.0]`)

	// Whitespace and top-level values.
	add("ws-01", "whitespace everywhere", " \t\r\n{ \"a\" :\t[ 1 ,\n2 ] ,\r\"b\" : { } , \"c\":[ ] } \n")
	add("top-01", "a string", `"x<y"`)
	add("top-02", "a number", `-12.5e3`)
	add("top-03", "true", `true`)
	add("top-04", "null with whitespace", " null ")
	add("top-05", "empty object", `{}`)
	add("top-06", "empty array", `[]`)
	add("lit-01", "literals in an object", `{"t":true,"f":false,"n":null}`)
	add("deep-01", "10000 nested arrays (Go's limit)", strings.Repeat("[", 10000)+strings.Repeat("]", 10000))
	add("deep-02", "nested objects and arrays", strings.Repeat(`{"a":[`, 100)+"1"+strings.Repeat("]}", 100))

	// UTF-8 (R1).
	add("utf8-01", "a lone 0xff byte in a string", "[\"\xff\"]")
	add("utf8-02", "overlong NUL", "[\"\xc0\x80\"]")
	add("utf8-03", "an encoded surrogate", "[\"\xed\xa0\x80\"]")
	add("utf8-04", "above U+10FFFF", "[\"\xf4\x90\x80\x80\"]")
	add("utf8-05", "truncated sequence at the end", "[\"\xe2\x82")
	add("utf8-06", "invalid UTF-8 after a syntax error is still UTF-8 first", "[1,,\"\xff\"]")

	// Grammar.
	for i, t := range []string{
		"", " ", "\ufeff{}", "1.", "-", "+1", ".5", "1.e5", "1e", "1e+", "-a", "[1,]", `{"a":1,}`, "[", "]",
		`{"a"}`, `{"a":}`, `{a:1}`, `{'a':1}`, `"abc`, "\"a\tb\"", "\"a\nb\"", `"\x"`, `"\U0041"`, `"\u12"`, `"\u12G4"`,
		"tru", "nul", "fals", "True", "NaN", "Infinity", "-Infinity", "\v1", "\u00a01", `[1 2]`, `{"a":1 "b":2}`,
		`{"a" 1}`, `{,}`, `[,1]`, `{"a":1}}`, "\x00", "/*c*/1",
	} {
		add(fmt.Sprintf("syn-%02d", i+1), "grammar", t)
	}
	for i, t := range []string{"{} {}", "1 2", "[]]", `{"a":1}x`, `"a""b"`, "01", "-01", "00", "null null", "[] ,"} {
		add(fmt.Sprintf("trail-%02d", i+1), "a second value or text after the value", t)
	}
	add("depth-01", "10001 nested arrays", strings.Repeat("[", 10001)+strings.Repeat("]", 10001))
	add("depth-02", "10001 nested objects and arrays, unclosed", strings.Repeat(`{"a":[`, 5001))

	// Surrogates (R2).
	add("sur-01", "lone high", `["\ud800"]`)
	add("sur-02", "lone low", `["\udc00"]`)
	add("sur-03", "two highs", `["\ud800\ud800"]`)
	add("sur-04", "high then text", `["\ud800x"]`)
	add("sur-05", "high then a non-surrogate escape", `["\ud800\u0041"]`)
	add("sur-06", "low then high", `["\udc00\ud800"]`)
	add("sur-07", "high at the end of the string", `["a\udbff"]`)
	add("sur-08", "in a member name", `{"\udfff":1}`)
	add("sur-09", "high then escaped newline", `["\ud800\n"]`)
	add("sur-10", "a good pair then a lone high", `["\ud83d\ude00\ud83d"]`)
	add("sur-11", "upper-case hex lone low", `["\uDFFF"]`)

	// Duplicates (R1).
	add("dup-01", "same name twice", `{"a":1,"a":2}`)
	add("dup-02", "equal after unescaping", `{"ab":1,"a\u0062":2}`)
	add("dup-03", "nested", `{"x":{"y":[{"z":1,"z":1}]}}`)
	add("dup-04", "escaped solidus", `{"/":1,"\/":2}`)
	add("dup-05", "astral escaped and raw", "{\"\U0001F600\":1,\"\\ud83d\\ude00\":2}")
	add("dup-06", "names differing in case are distinct", `{"a":1,"A":2}`)
	add("dup-07", "same name in sibling objects is fine", `[{"a":1},{"a":2}]`)
	// The message quotes the name as Go's %q does.
	add("dup-08", "quoted name: controls and quotes", `{"\t\u007f\u0001\u0007\u000b\"\\":1,"\t\u007f\u0001\u0007\u000b\"\\":2}`)
	add("dup-09", "quoted name: spaces, separators, format characters", `{"\u00a0\u2028\u00ad\u200b\ufeff\u0085 é中😀":1,"\u00a0\u2028\u00ad\u200b\ufeff\u0085 é中😀":2}`)
	add("dup-10", "quoted name: private use and noncharacters", `{"\ue000\udb80\udc00\ufffe\udb40\udc01":1,"\ue000\udb80\udc00\ufffe\udb40\udc01":2}`)

	// Which fault the reference reports first.
	add("order-01", "duplicate then surrogate: surrogate", `{"a":1,"a":"\ud800"}`)
	add("order-02", "surrogate then syntax: syntax", `["\ud800",]`)
	add("order-03", "duplicate then trailing text: trailing", `{"a":1,"a":2} x`)
	add("order-04", "duplicate then depth: depth", `{"a":1,"a":2,"b":`+strings.Repeat("[", 10001)+strings.Repeat("]", 10001)+"}")
	return all
}
