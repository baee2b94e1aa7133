// Command rin-bench times the Go reference's rin.host/v2 digest functions on the inputs the
// TypeScript bench hands it (bench/rin.bench.ts), so both sides hash the same documents, and prints
// one JSON object: each case's output (a digest, or canonical text; the TypeScript side checks it agrees) and its rate.
//
// Usage: go run . <inputs.json>, where inputs.json is
// {"spec_json", "request_json", "effects_json", "documents": [{"name", "text"}…]}, every one a JSON
// text carried as a string so that its number lexemes arrive as written.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/sunrioa/rin/host"
)

type inputs struct {
	Spec      string `json:"spec_json"`
	Request   string `json:"request_json"`
	Effects   string `json:"effects_json"`
	Documents []struct {
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"documents"`
}

type result struct {
	Name      string  `json:"name"`
	Output    string  `json:"output"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// Operations per second of CPU time this process used (every thread: the collector's work counts).
	OpsPerCPUSec float64 `json:"ops_per_cpu_sec"`
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "rin-bench: "+format+"\n", args...)
	os.Exit(1)
}

func cpuSeconds() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		fail("getrusage: %v", err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
}

// rate returns a case's operations per second of wall time and per second of CPU time, measured
// over testing.Benchmark's final run: the CPU clock is read around every run and the last one kept.
func rate(f func() error) (float64, float64) {
	var failed error
	var cpu float64
	r := testing.Benchmark(func(b *testing.B) {
		start := cpuSeconds()
		defer func() { cpu = cpuSeconds() - start }()
		for b.Loop() {
			if err := f(); err != nil {
				failed = err
				b.FailNow()
			}
		}
	})
	if failed != nil {
		fail("%v", failed)
	}
	return float64(r.N) / r.T.Seconds(), float64(r.N) / cpu
}

func measured(name string, f func() error) result {
	wall, cpu := rate(f)
	return result{Name: name, OpsPerSec: wall, OpsPerCPUSec: cpu}
}

// canonical is host/action_validate.go canonicalizeJSONObject without its bound and wire checks:
// what the canonicalization alone costs in Go.
func canonical(raw []byte) ([]byte, error) {
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	var value any
	if err := decoder.Decode(&value); err != nil {
		return nil, err
	}
	return json.Marshal(value)
}

func main() {
	if len(os.Args) != 2 {
		fail("usage: go run . <inputs.json>")
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail("%v", err)
	}
	var in inputs
	if err := json.Unmarshal(raw, &in); err != nil {
		fail("inputs: %v", err)
	}
	var spec host.CapabilitySpec
	var request host.ActionRequest
	var effects []host.Effect
	for name, pair := range map[string]struct {
		raw string
		to  any
	}{"spec_json": {in.Spec, &spec}, "request_json": {in.Request, &request}, "effects_json": {in.Effects, &effects}} {
		if err := json.Unmarshal([]byte(pair.raw), pair.to); err != nil {
			fail("%s: %v", name, err)
		}
	}

	var results []result
	var sealed host.CapabilitySpec
	seal := func() (err error) { sealed, err = host.SealCapabilitySpec(spec); return err }
	results = append(results, measured("capability spec seal", seal))
	results[len(results)-1].Output = sealed.Digest

	var digest string
	requestDigest := func() (err error) { digest, err = host.ActionRequestDigest(request); return err }
	results = append(results, measured("action request digest", requestDigest))
	results[len(results)-1].Output = digest

	effectDigest := func() (err error) { digest, err = host.EffectPreviewDigest(effects); return err }
	results = append(results, measured(fmt.Sprintf("effect digest (%d effects)", len(effects)), effectDigest))
	results[len(results)-1].Output = digest

	for _, doc := range in.Documents {
		var out []byte
		canon := func() (err error) { out, err = canonical([]byte(doc.Text)); return err }
		results = append(results, measured("canonical "+doc.Name, canon))
		results[len(results)-1].Output = string(out)
	}

	out := map[string]any{"go": runtime.Version(), "gomaxprocs": runtime.GOMAXPROCS(0), "results": results}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail("%v", err)
	}
}
