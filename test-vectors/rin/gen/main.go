// Command gen writes ../gojson.json: JSON texts and what the rin.host/v2 reference makes of them.
//
// Canonical forms come from Go's encoding/json exactly as host/action_validate.go
// canonicalizeJSONObject does it: a Decoder with UseNumber into an interface value, then json.Marshal
// (map members sorted by Go string order = UTF-8 bytes, HTML-safe escaping, number lexemes verbatim).
// A text is first judged as the reference's internal/jsonwire.Validate judges it, in its order: UTF-8,
// then the grammar (json.Valid; the scanner's error names depth and trailing-data faults), then
// escaped surrogates that do not pair, then repeated member names at any depth. Internal packages
// cannot be imported from here, so those last two rules are restated below from their documentation
// (R1, R2 of rin-requirements.md).
//
// Run: cd test-vectors/rin/gen && go run . > ../gojson.json
// With -stdin it judges a JSON array of texts read from standard input instead.
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

type input struct {
	id   string
	text string // the input's bytes (may be invalid UTF-8)
	note string
}

type vector struct {
	ID          string  `json:"id"`
	Description string  `json:"description,omitempty"`
	Text        *string `json:"text,omitempty"`
	Hex         string  `json:"hex,omitempty"`
	Canonical   string  `json:"canonical,omitempty"`
	Error       string  `json:"error,omitempty"`
	GoError     string  `json:"go_error,omitempty"`
}

func classify(payload []byte) (string, string) {
	if !utf8.Valid(payload) {
		return "JSON_UTF8", "invalid UTF-8"
	}
	if !json.Valid(payload) {
		var v any
		err := json.Unmarshal(payload, &v)
		var syntax *json.SyntaxError
		if err == nil || !errors.As(err, &syntax) {
			return "JSON_SYNTAX", fmt.Sprint(err)
		}
		switch {
		case strings.Contains(err.Error(), "exceeded max depth"):
			return "JSON_DEPTH", err.Error()
		case strings.Contains(err.Error(), "after top-level value"):
			return "JSON_TRAILING", err.Error()
		}
		return "JSON_SYNTAX", err.Error()
	}
	if !pairedEscapes(payload) {
		return "JSON_SURROGATE", "must contain well-formed escaped Unicode"
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := noDuplicates(dec); err != nil {
		return "JSON_DUPLICATE", err.Error()
	}
	return "", ""
}

// pairedEscapes: every \u escape of a high surrogate is followed at once by a \u escape of a low one,
// and no low surrogate is escaped alone. The payload is grammatical JSON here.
func pairedEscapes(p []byte) bool {
	unit := func(at int) (rune, bool) {
		if at+4 > len(p) {
			return 0, false
		}
		var r rune
		for _, c := range p[at : at+4] {
			var d byte
			switch {
			case c >= '0' && c <= '9':
				d = c - '0'
			case c >= 'a' && c <= 'f':
				d = c - 'a' + 10
			case c >= 'A' && c <= 'F':
				d = c - 'A' + 10
			default:
				return 0, false
			}
			r = r<<4 | rune(d)
		}
		return r, true
	}
	inString := false
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '"':
			inString = !inString
		case '\\':
			i++
			if p[i] != 'u' {
				continue
			}
			r, _ := unit(i + 1)
			i += 4
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return false
			case r >= 0xD800 && r <= 0xDBFF:
				if i+2 >= len(p) || p[i+1] != '\\' || p[i+2] != 'u' {
					return false
				}
				low, ok := unit(i + 3)
				if !ok || low < 0xDC00 || low > 0xDFFF {
					return false
				}
				i += 6
			}
		}
	}
	return true
}

func noDuplicates(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if delim == '{' {
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			name := tok.(string)
			if seen[name] {
				return fmt.Errorf("duplicate object name %q", name)
			}
			seen[name] = true
			if err := noDuplicates(dec); err != nil {
				return err
			}
		}
	} else {
		for dec.More() {
			if err := noDuplicates(dec); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token()
	return err
}

// canonical is canonicalizeJSONObject without its object-only check: any value is written the same way.
func canonical(payload []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	var rest any
	if err := dec.Decode(&rest); !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("trailing data: %v", err)
	}
	out, err := json.Marshal(v)
	return string(out), err
}

// judgeStdin answers a JSON array of texts on standard input with one vector each (for the
// differential test in test/crypto/gojson.test.ts).
func judgeStdin() {
	var texts []string
	if err := json.NewDecoder(os.Stdin).Decode(&texts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := make([]vector, 0, len(texts))
	for i, t := range texts {
		v := vector{ID: fmt.Sprint(i)}
		if code, why := classify([]byte(t)); code != "" {
			v.Error, v.GoError = code, why
		} else if c, err := canonical([]byte(t)); err != nil {
			v.Error = "GO_FAILED: " + err.Error()
		} else {
			v.Canonical = c
		}
		out = append(out, v)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-stdin" {
		judgeStdin()
		return
	}
	var vectors []vector
	for _, in := range inputs() {
		v := vector{ID: in.id, Description: in.note}
		if utf8.ValidString(in.text) {
			text := in.text
			v.Text = &text
		} else {
			v.Hex = hex.EncodeToString([]byte(in.text))
		}
		code, why := classify([]byte(in.text))
		if code != "" {
			v.Error, v.GoError = code, why
		} else {
			c, err := canonical([]byte(in.text))
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: accepted by the checks but not canonicalized: %v\n", in.id, err)
				os.Exit(1)
			}
			v.Canonical = c
		}
		vectors = append(vectors, v)
	}
	doc := map[string]any{
		"description": "Go encoding/json canonical form of JSON texts as the rin.host/v2 reference computes it (R1, R2, R9-R11). " +
			"Each case has `text` (or `hex` when the bytes are not UTF-8) and either `canonical` (the exact output) or `error` (our code for the fault class the reference reports first; `go_error` is Go's own wording).",
		"source": "Generated by test-vectors/rin/gen (go run . > ../gojson.json) with " + goVersion() + ": canonical = json.Marshal of the value decoded with Decoder.UseNumber, as host/action_validate.go canonicalizeJSONObject; faults in the order of internal/jsonwire.Validate.",
		"cases":  vectors,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
