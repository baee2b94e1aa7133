// Command rin-schema-judge prints the reference's verdicts on schema documents and instances: the
// rin.host/v2 host package of ../shared/reference/rin-src, unmodified (host.NewSchema, then
// Schema.ValidateInstance, the check a Go host runs on arguments, outputs and effect attributes).
// test/interop/rin-schema-go.test.ts builds it; go.mod replaces github.com/sunrioa/rin with that
// directory, read in place.
//
// Input (stdin): [{"document": "<schema text>", "instances": ["<json text>", …]}, …]
// Output (stdout): [{"schema": "<verdict>", "instances": ["<verdict>", …]}, …], a verdict being "ok",
// "refused: <error>" or "panic: <value>"; instances are judged only under a schema that is "ok".
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/sunrioa/rin/host"
)

type judged struct {
	Document  string   `json:"document"`
	Instances []string `json:"instances"`
}

type verdicts struct {
	Schema    string   `json:"schema"`
	Instances []string `json:"instances"`
}

// verdict runs one check; a panic (the library panics on some numbers big.Rat cannot hold) is a
// verdict too, not the end of the run.
func verdict(check func() error) (out string) {
	defer func() {
		if r := recover(); r != nil {
			out = fmt.Sprintf("panic: %v", r)
		}
	}()
	if err := check(); err != nil {
		return "refused: " + err.Error()
	}
	return "ok"
}

func main() {
	var input []judged
	if err := json.NewDecoder(os.Stdin).Decode(&input); err != nil {
		fmt.Fprintln(os.Stderr, "rin-schema-judge: reading the cases:", err)
		os.Exit(2)
	}
	output := make([]verdicts, 0, len(input))
	for _, c := range input {
		var schema host.Schema
		v := verdicts{Instances: []string{}}
		v.Schema = verdict(func() (err error) {
			schema, err = host.NewSchema([]byte(c.Document))
			return err
		})
		if v.Schema == "ok" {
			for _, instance := range c.Instances {
				v.Instances = append(v.Instances, verdict(func() error { return schema.ValidateInstance([]byte(instance)) }))
			}
		}
		output = append(output, v)
	}
	if err := json.NewEncoder(os.Stdout).Encode(output); err != nil {
		fmt.Fprintln(os.Stderr, "rin-schema-judge: writing the verdicts:", err)
		os.Exit(2)
	}
}
