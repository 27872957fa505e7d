package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
	buildversion "github.com/gpuform/gpuform/internal/version"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestInvalidConfigs and docs/cli.md")

// invalidDir holds one bad configuration per directory. Besides its *.hcl
// files a case may have:
//
//	args       extra command-line arguments, one per line (--var a=b, --var-file=x.vars.hcl)
//	env        environment variables, NAME=value per line (GPUFORM_VAR_x=...)
//	forbidden  strings, one per line, that must appear in no output (sensitive values)
//	expected.txt   golden stderr of `gpuform --no-color validate`
//	expected.json  golden stdout of `gpuform validate --json`
const invalidDir = "../../testdata/config/invalid"

// minInvalidCases is the least number of bad configurations the suite must hold.
const minInvalidCases = 30

func invalidCases(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(invalidDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// readLines returns the non-empty lines of dir/name that do not start with
// '#'; nil when the file does not exist.
func readLines(t *testing.T, dir, name string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out
}

func TestInvalidConfigCount(t *testing.T) {
	if n := len(invalidCases(t)); n < minInvalidCases {
		t.Fatalf("%s holds %d cases; want at least %d", invalidDir, n, minInvalidCases)
	}
}

func TestInvalidConfigs(t *testing.T) {
	for _, name := range invalidCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(invalidDir, name)
			if _, err := os.Stat(filepath.Join(dir, "main.hcl")); err != nil {
				t.Fatalf("case without main.hcl: %v", err)
			}
			args := readLines(t, dir, "args")
			env := readLines(t, dir, "env")

			text := runGpuform(t, env, append([]string{"--chdir", dir, "--no-color", "validate"}, args...)...)
			js := runGpuform(t, env, append([]string{"--chdir", dir, "validate", "--json"}, args...)...)

			if text.code != 1 || js.code != 1 {
				t.Errorf("exit codes: validate %d, validate --json %d; want 1 and 1", text.code, js.code)
			}
			if text.stdout != "" {
				t.Errorf("validate printed to stdout:\n%s", text.stdout)
			}
			if js.stderr != "" {
				t.Errorf("validate --json printed to stderr:\n%s", js.stderr)
			}
			if !strings.HasPrefix(text.stderr, "Error: ") {
				t.Errorf("validate stderr does not start with an error:\n%s", text.stderr)
			}
			var parsed config.JSONDiagnostics
			if err := json.Unmarshal([]byte(js.stdout), &parsed); err != nil {
				t.Errorf("validate --json output is not JSON: %v\n%s", err, js.stdout)
			} else if parsed.Valid || parsed.ErrorCount == 0 {
				t.Errorf("validate --json: valid=%v error_count=%d; want an invalid result", parsed.Valid, parsed.ErrorCount)
			}
			for _, s := range readLines(t, dir, "forbidden") {
				if strings.Contains(text.stderr, s) || strings.Contains(js.stdout, s) {
					t.Errorf("the output shows %q, which must stay hidden", s)
				}
			}

			golden(t, filepath.Join(dir, "expected.txt"), text.stderr)
			golden(t, filepath.Join(dir, "expected.json"), js.stdout)
		})
	}
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/gpuform -run TestInvalidConfigs -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (rerun with -update to accept it)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func TestValidExamples(t *testing.T) {
	for _, name := range []string{"quickstart", "bank", "shared", "orgtree", "fleet"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("..", "..", "examples", name)
			r := runGpuform(t, nil, "--chdir", dir, "--no-color", "validate")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("validate: exit %d, stderr:\n%s", r.code, r.stderr)
			}
			if !strings.HasPrefix(r.stdout, "Success!") {
				t.Errorf("validate stdout does not start with Success!:\n%s", r.stdout)
			}
			js := runGpuform(t, nil, "--chdir", dir, "validate", "--json")
			if js.code != 0 || js.stderr != "" {
				t.Fatalf("validate --json: exit %d, stderr:\n%s", js.code, js.stderr)
			}
			var parsed config.JSONDiagnostics
			if err := json.Unmarshal([]byte(js.stdout), &parsed); err != nil {
				t.Fatalf("validate --json output is not JSON: %v\n%s", err, js.stdout)
			}
			if !parsed.Valid || parsed.ErrorCount != 0 || len(parsed.Diagnostics) != 0 {
				t.Errorf("validate --json: %+v; want valid with no diagnostics", parsed)
			}
		})
	}
}

const unformatted = `gpuform {
  stack = "fmt-test"
    scheduler = "kueue"
}

priority "batch" {
  value = 1000
  preemption = "Never"
}
`

const formatted = `gpuform {
  stack     = "fmt-test"
  scheduler = "kueue"
}

priority "batch" {
  value      = 1000
  preemption = "Never"
}
`

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFmt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "main.hcl", unformatted)
	writeFile(t, dir, "ok.hcl", formatted)

	r := runGpuform(t, nil, "--chdir", dir, "fmt", "--check")
	if r.code != exitFmtCheck {
		t.Errorf("fmt --check on an unformatted file: exit %d; want %d (stderr %q)", r.code, exitFmtCheck, r.stderr)
	}
	if r.stdout != "main.hcl\n" {
		t.Errorf("fmt --check stdout = %q; want the unformatted file's name", r.stdout)
	}
	if got := readFile(t, dir, "main.hcl"); got != unformatted {
		t.Errorf("fmt --check changed main.hcl:\n%s", got)
	}

	r = runGpuform(t, nil, "--chdir", dir, "fmt")
	if r.code != 0 || r.stdout != "main.hcl\n" || r.stderr != "" {
		t.Errorf("fmt: exit %d, stdout %q, stderr %q; want 0 and main.hcl", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, dir, "main.hcl"); got != formatted {
		t.Errorf("fmt wrote:\n%s\nwant:\n%s", got, formatted)
	}

	r = runGpuform(t, nil, "--chdir", dir, "fmt", "--check")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("fmt --check after fmt: exit %d, stdout %q, stderr %q; want 0 and no output", r.code, r.stdout, r.stderr)
	}
}

func TestFmtSyntaxError(t *testing.T) {
	t.Parallel()
	const broken = "gpuform {\n  stack =   \"x\"\n\npriority \"batch\" {\n  value = 1000\n}\n"
	for _, check := range []bool{true, false} {
		dir := t.TempDir()
		writeFile(t, dir, "main.hcl", broken)
		args := []string{"--chdir", dir, "--no-color", "fmt"}
		if check {
			args = append(args, "--check")
		}
		r := runGpuform(t, nil, args...)
		if r.code != 1 {
			t.Errorf("%v: exit %d; want 1", args[3:], r.code)
		}
		if !strings.Contains(r.stderr, "Error: ") || !strings.Contains(r.stderr, "main.hcl") {
			t.Errorf("%v: stderr does not report the syntax error in main.hcl:\n%s", args[3:], r.stderr)
		}
		if got := readFile(t, dir, "main.hcl"); got != broken {
			t.Errorf("%v changed a file with a syntax error:\n%s", args[3:], got)
		}
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	r := runGpuform(t, nil, "catalog")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("catalog: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// The command prints engine/render's catalog golden: every GPU (those of
	// NVIDIA's default mig-parted configuration among them) with its PCI
	// device IDs and every profile's placements.
	want, err := os.ReadFile(filepath.Join("..", "..", "engine", "render", "testdata", "catalog.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if r.stdout != string(want) {
		t.Errorf("gpuform catalog differs from engine/render/testdata/catalog.golden:\n%s", r.stdout)
	}
	_, block, ok := strings.Cut(r.stdout, "\nA100-80GB ")
	if !ok {
		t.Fatalf("catalog does not list A100-80GB:\n%s", r.stdout)
	}
	block, _, _ = strings.Cut(block, "\n\n")
	var row string
	for _, line := range strings.Split(block, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "1g.10gb" {
			row = line
		}
	}
	if row == "" {
		t.Fatalf("catalog has no 1g.10gb row under A100-80GB:\n%s", r.stdout)
	}
	// 1g.10gb on A100-80GB: 1 compute slice, 1 memory slot, 7 instances at slots 0..6, drawn.
	if f := strings.Fields(row); len(f) < 5 || f[1] != "1" || f[2] != "1" || f[3] != "7" ||
		!strings.HasSuffix(row, "[1g][1g][1g][1g][1g][1g][1g][  ]") {
		t.Errorf("A100-80GB 1g.10gb row = %q; want 1 compute, 1 memory slot, max 7, placements at slots 0 .. 6", row)
	}

	for _, args := range [][]string{{"catalog", "-o", "json"}, {"catalog", "--json"}} {
		checkCatalogJSON(t, args)
	}
}

// checkCatalogJSON checks the catalog's JSON of gpuform args: every GPU,
// snake_case names and PCI device IDs as hex strings.
func checkCatalogJSON(t *testing.T, args []string) {
	t.Helper()
	js := runGpuform(t, nil, args...)
	if js.code != 0 || js.stderr != "" {
		t.Fatalf("%v: exit %d, stderr:\n%s", args, js.code, js.stderr)
	}
	for _, goName := range []string{`"Key"`, `"PCIDeviceIDs"`, `"MaxInstances"`, `"Start"`} {
		if strings.Contains(js.stdout, goName) {
			t.Errorf("%v has the Go field name %s; gpuform's JSON is snake_case", args, goName)
		}
	}
	var parsed struct {
		GPUs []struct {
			Key          string   `json:"key"`
			PCIDeviceIDs []string `json:"pci_device_ids"`
			MIG          bool     `json:"mig"`
			Profiles     []struct {
				MaxInstances int `json:"max_instances"`
			} `json:"profiles"`
		} `json:"gpus"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &parsed); err != nil {
		t.Fatalf("%v is not JSON: %v", args, err)
	}
	got := map[string]int{}
	for i, g := range parsed.GPUs {
		got[g.Key] = i
	}
	for _, want := range mig.Default().GPUs() {
		i, ok := got[want.Key]
		if !ok {
			t.Errorf("%v lacks %s", args, want.Key)
			continue
		}
		g := parsed.GPUs[i]
		if g.MIG != want.MIG || len(g.Profiles) != len(want.Profiles) || len(g.PCIDeviceIDs) != len(want.PCIDeviceIDs) {
			t.Errorf("%v %s: MIG %v with %d profiles, %d PCI IDs; want %v with %d, %d", args, want.Key, g.MIG, len(g.Profiles), len(g.PCIDeviceIDs), want.MIG, len(want.Profiles), len(want.PCIDeviceIDs))
			continue
		}
		for j, id := range want.PCIDeviceIDs {
			if g.PCIDeviceIDs[j] != mig.FormatPCIDeviceID(id) {
				t.Errorf("%v %s: PCI device ID %q, want %q", args, want.Key, g.PCIDeviceIDs[j], mig.FormatPCIDeviceID(id))
			}
		}
		for j, p := range want.Profiles {
			if g.Profiles[j].MaxInstances != p.MaxInstances {
				t.Errorf("%v %s %s: max_instances %d, want %d", args, want.Key, p.Name, g.Profiles[j].MaxInstances, p.MaxInstances)
			}
		}
	}
	if len(parsed.GPUs) != len(mig.Default().GPUs()) {
		t.Errorf("%v has %d GPUs; the catalog has %d", args, len(parsed.GPUs), len(mig.Default().GPUs()))
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := runGpuform(t, nil, "version")
	if r.code != 0 || r.stderr != "" || r.stdout != buildversion.Line(version, commit)+"\n" || !strings.HasPrefix(r.stdout, "gpuform dev (") {
		t.Errorf("version: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
