package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileHead is the valid start of every hostile configuration.
const hostileHead = "gpuform {\n  stack = \"s\"\n}\n"

// writeFiles writes name -> content into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// local is a configuration whose locals block sets x to expr.
func local(expr string) map[string]string {
	return map[string]string{"main.hcl": hostileHead + "locals {\n  x = " + expr + "\n}\n"}
}

// TestHostileInput loads configurations made to exhaust the loader and
// checks that each is one clear diagnostic, at the right place where there
// is one, within generous bounds of time and allocation (a load that
// recursed without bound, or built the input's blow-up, would take seconds
// and gigabytes; each of these takes milliseconds and a few megabytes).
func TestHostileInput(t *testing.T) {
	const (
		quick    = 5 * time.Second
		small    = 128 << 20
		n        = 10_000
		inDir    = "in"
		outside  = "outside.txt"
		anywhere = "/dev/zero"
	)
	cases := []struct {
		name string
		// setup writes the configuration into dir (the configuration
		// directory) and may use parent, a directory outside it.
		setup func(t *testing.T, dir, parent string)
		// summary and detail are parts of the first error's texts.
		summary, detail string
		// at is the first error's file:line:col, or "" when it has none.
		at       string
		maxTime  time.Duration
		maxAlloc uint64
	}{
		{
			name: "file-50MB",
			setup: func(t *testing.T, dir, _ string) {
				writeFiles(t, dir, map[string]string{"main.hcl": hostileHead + "# " + strings.Repeat("x", 50<<20) + "\n"})
			},
			summary: "Failed to read file", detail: "Cannot read main.hcl: it is 52428829 bytes, over the limit of 16777216",
			maxTime: quick, maxAlloc: small,
		},
		{
			name: "files-over-MaxConfigSize",
			setup: func(t *testing.T, dir, _ string) {
				big := "# " + strings.Repeat("x", 12<<20) + "\n"
				writeFiles(t, dir, map[string]string{"main.hcl": hostileHead, "a.hcl": big, "b.hcl": big, "c.hcl": big})
			},
			summary: "Configuration too large", detail: "more than 33554432 bytes (config.MaxConfigSize); gpuform stops reading at c.hcl",
			at: "c.hcl:1,1", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "nested-parentheses-10000",
			setup:   files(local(strings.Repeat("(", n) + "1" + strings.Repeat(")", n))),
			summary: "Nesting too deep", detail: "more than 1000 levels deep here (config.MaxNesting)",
			at: "main.hcl:5,1006", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "nested-brackets-10000",
			setup:   files(local(strings.Repeat("[", n) + "1" + strings.Repeat("]", n))),
			summary: "Nesting too deep", at: "main.hcl:5,1006", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "nested-objects-10000",
			setup:   files(local(strings.Repeat("{ a = ", n) + "1" + strings.Repeat(" }", n))),
			summary: "Nesting too deep", at: "main.hcl:5,6001", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "nested-function-calls-10000",
			setup:   files(local(strings.Repeat("abs(", n) + "1" + strings.Repeat(")", n))),
			summary: "Nesting too deep", at: "main.hcl:5,4006", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "nested-templates-10000",
			setup:   files(local(strings.Repeat(`"${`, n) + "1" + strings.Repeat(`}"`, n))),
			summary: "Nesting too deep", at: "main.hcl:5,1505", maxTime: quick, maxAlloc: small,
		},
		{
			name: "nested-blocks-10000",
			setup: files(map[string]string{"main.hcl": hostileHead +
				strings.Repeat("tenant \"t\" {\n", n) + strings.Repeat("}\n", n)}),
			summary: "Nesting too deep", at: "main.hcl:1004,8", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "unary-minus-1000000",
			setup:   files(local(strings.Repeat("-", 1_000_000) + "1")),
			summary: "Nesting too deep", at: "main.hcl:5,1006", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "chained-plus-1000000",
			setup:   files(local("1" + strings.Repeat(" + 1", 1_000_000))),
			summary: "Nesting too deep", at: "main.hcl:5,4005", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "chained-conditionals-100000",
			setup:   files(local(strings.Repeat("true ? 1 : ", 100_000) + "1")),
			summary: "Nesting too deep", at: "main.hcl:5,11001", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "chained-index-100000",
			setup:   files(local("[1]" + strings.Repeat("[0]", 100_000))),
			summary: "Nesting too deep", at: "main.hcl:5,3004", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "jsondecode-nested-10000",
			setup:   files(local(`jsondecode("` + strings.Repeat("[", n) + strings.Repeat("]", n) + `")`)),
			summary: "Error in function call", detail: "the JSON is nested more than 1000 levels deep (config.MaxNesting)",
			at: "main.hcl:5,7", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "list-of-3000000-elements",
			setup:   files(local("[" + strings.Repeat("1,", 3_000_000) + "]")),
			summary: "Configuration too large", detail: "more than 4000000 tokens (config.MaxTokens)",
			at: "main.hcl:5,3999993", maxTime: quick, maxAlloc: small,
		},
		{
			name: "blocks-100001",
			setup: func(t *testing.T, dir, _ string) {
				var b bytes.Buffer
				b.WriteString(hostileHead)
				for i := range 100_000 {
					fmt.Fprintf(&b, "priority \"p%d\" {}\n", i)
				}
				writeFiles(t, dir, map[string]string{"main.hcl": b.String()})
			},
			summary: "Too many blocks", detail: "more than 100000 top-level blocks (config.MaxBlocks)",
			at: "main.hcl:100003,19", maxTime: quick, maxAlloc: small,
		},
		{
			name: "invalid-utf8-15MB",
			setup: files(map[string]string{"main.hcl": hostileHead + "locals {\n  x = \"" +
				strings.Repeat("\xff", 15<<20) + "\"\n}\n"}),
			summary: "Invalid character encoding", detail: "must be UTF-8 encoded",
			at: "main.hcl:5,8", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "invalid-utf8-in-comment",
			setup:   files(map[string]string{"main.hcl": hostileHead + "# caf\xe9\n"}),
			summary: "Invalid character encoding", at: "main.hcl:4,6", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "nul-bytes-5000000",
			setup:   files(map[string]string{"main.hcl": hostileHead + strings.Repeat("\x00", 5_000_000)}),
			summary: "Configuration too large", detail: "config.MaxTokens", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "invalid-characters-5000",
			setup:   files(map[string]string{"main.hcl": hostileHead + strings.Repeat("\x00", 5000)}),
			summary: "Invalid character", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "file-dev-zero",
			setup:   files(local(`file("` + anywhere + `")`)),
			summary: "Error in function call", detail: `"/dev/zero" is outside the configuration directory`,
			at: "main.hcl:5,7", maxTime: quick, maxAlloc: small,
		},
		{
			name: "file-dotdot",
			setup: func(t *testing.T, dir, parent string) {
				writeFiles(t, parent, map[string]string{outside: "secret"})
				writeFiles(t, dir, local(`file("../`+outside+`")`))
			},
			summary: "Error in function call", detail: `"../outside.txt" is outside the configuration directory`,
			at: "main.hcl:5,7", maxTime: quick, maxAlloc: small,
		},
		{
			name: "file-symlink-outside",
			setup: func(t *testing.T, dir, parent string) {
				writeFiles(t, parent, map[string]string{outside: "secret"})
				symlink(t, filepath.Join(parent, outside), filepath.Join(dir, "link.txt"))
				writeFiles(t, dir, local(`file("link.txt")`))
			},
			summary: "Error in function call", detail: "Cannot read link.txt: it leads outside the configuration directory (through .. or a symbolic link).",
			at: "main.hcl:5,7", maxTime: quick, maxAlloc: small,
		},
		{
			name: "file-symlink-dev-zero",
			setup: func(t *testing.T, dir, _ string) {
				symlink(t, anywhere, filepath.Join(dir, "zero.txt"))
				writeFiles(t, dir, local(`file("zero.txt")`))
			},
			summary: "Error in function call", detail: "Cannot read zero.txt: it leads outside the configuration directory",
			at: "main.hcl:5,7", maxTime: quick, maxAlloc: small,
		},
		{
			name: "file-fifo",
			setup: func(t *testing.T, dir, _ string) {
				mkfifo(t, filepath.Join(dir, "pipe.txt"))
				writeFiles(t, dir, local(`file("pipe.txt")`))
			},
			summary: "Error in function call", detail: "Cannot read pipe.txt: not a regular file.",
			at: "main.hcl:5,7", maxTime: quick, maxAlloc: small,
		},
		{
			name: "config-file-fifo",
			setup: func(t *testing.T, dir, _ string) {
				mkfifo(t, filepath.Join(dir, "pipe.hcl"))
				writeFiles(t, dir, map[string]string{"main.hcl": hostileHead})
			},
			summary: "Failed to read file", detail: "Cannot read pipe.hcl: not a regular file.",
			maxTime: quick, maxAlloc: small,
		},
		{
			name: "file-over-MaxFileSize",
			setup: func(t *testing.T, dir, _ string) {
				writeFiles(t, dir, map[string]string{"big.txt": strings.Repeat("x", MaxFileSize+1)})
				writeFiles(t, dir, local(`file("big.txt")`))
			},
			summary: "Error in function call", detail: "Cannot read big.txt: it is 16777217 bytes, over the limit of 16777216.",
			at: "main.hcl:5,7", maxTime: quick, maxAlloc: small,
		},
		{
			name: "for-each-setproduct-1000000",
			setup: files(map[string]string{"main.hcl": hostileHead + "priority \"p\" {\n" +
				"  for_each = { for p in setproduct(range(1000), range(1000)) : \"${p[0]}-${p[1]}\" => p[0] }\n" +
				"  value    = each.value\n}\n"}),
			summary: "Error in function call", detail: `"setproduct" failed: the result would have 1000000 or more elements; the limit is 100000 (config.MaxCollection)`,
			at: "main.hcl:5,25", maxTime: quick, maxAlloc: small,
		},
		{
			name: "for-each-nested-for-1000000",
			setup: files(map[string]string{"main.hcl": hostileHead + "priority \"p\" {\n" +
				"  for_each = toset(flatten([for a in range(1000) : [for b in range(1000) : \"${a}-${b}\"]]))\n" +
				"  value    = 1\n}\n"}),
			summary: "Error in function call", detail: `Call to function "for" failed: the for expressions of the configuration have iterated over more than 200000 elements in all (config.MaxForIterations)`,
			at: "main.hcl:5,62", maxTime: 30 * time.Second, maxAlloc: 1 << 30,
		},
		{
			name:    "nested-for-behind-comments-and-in-templates",
			setup:   files(local(`[ /* a */ for a in range(1000) : "%{ for b in range(1000) }${b}%{ endfor }" ]`)),
			summary: "Error in function call", detail: `Call to function "for" failed: the for expressions of the configuration have iterated over more than 200000 elements in all (config.MaxForIterations)`,
			at: "main.hcl:5,53", maxTime: 30 * time.Second, maxAlloc: 1 << 30,
		},
		{
			name: "for-each-flatten-200000",
			setup: files(map[string]string{"main.hcl": hostileHead + "locals {\n  l = range(1000)\n}\n" +
				"priority \"p\" {\n  for_each = toset(flatten([for a in range(200) : local.l]))\n  value    = 1\n}\n"}),
			summary: "Error in function call", detail: `"flatten" failed: the result would have 100001 or more elements; the limit is 100000 (config.MaxCollection)`,
			at: "main.hcl:8,20", maxTime: quick, maxAlloc: 512 << 20,
		},
		{
			name: "count-1000000",
			setup: files(map[string]string{"main.hcl": hostileHead +
				"priority \"p\" {\n  count = 1000000\n  value = count.index\n}\n"}),
			summary: "Invalid count argument", detail: "count is 1000000; the limit is 100000 instances per block.",
			at: "main.hcl:5,11", maxTime: quick, maxAlloc: small,
		},
		{
			name: "for-each-set-over-MaxInstances",
			setup: func(t *testing.T, dir, _ string) {
				var b strings.Builder
				b.WriteString(hostileHead + "priority \"p\" {\n  value    = 1\n  for_each = toset([")
				for i := range MaxInstances + 1 {
					fmt.Fprintf(&b, "%q, ", fmt.Sprint(i))
				}
				b.WriteString("])\n}\n")
				writeFiles(t, dir, map[string]string{"main.hcl": b.String()})
			},
			summary: "Invalid for_each argument", detail: "for_each would make 100001 instances; the limit is 100000 per block.",
			at: "main.hcl:6,14", maxTime: 30 * time.Second, maxAlloc: 1 << 30,
		},
		{
			name: "instances-over-MaxTotalInstances",
			setup: files(map[string]string{"main.hcl": hostileHead +
				"priority \"a\" {\n  count = 100000\n  value = 1\n}\n" +
				"priority \"b\" {\n  count = 100000\n  value = 1\n}\n" +
				"priority \"c\" {\n  count = 1\n  value = 1\n}\n"}),
			summary: "Too many instances", detail: "the configuration has 200001 instances of blocks; the limit is 200000 in all (config.MaxTotalInstances)",
			at: "main.hcl:12,1", maxTime: 60 * time.Second, maxAlloc: 2 << 30,
		},
		{
			name:    "replace-amplified",
			setup:   files(local(`replace(join("", [for i in range(1000) : "aaaaaaaaaa"]), "a", join("", [for i in range(1000) : "bbbbbbbbbb"]))`)),
			summary: "Error in function call", detail: `"replace" failed: the result would be 100000000 or more bytes; the limit is 16777216 (config.MaxFileSize)`,
			at: "main.hcl:5,7", maxTime: quick, maxAlloc: small,
		},
		{
			name:    "format-padding",
			setup:   files(local(`format("` + strings.Repeat("%999999d", 100) + `", ` + strings.Repeat("1, ", 99) + `1)`)),
			summary: "Error in function call", detail: `"format" failed: the result would be`,
			at: "main.hcl:5,7", maxTime: quick, maxAlloc: small,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, inDir)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			c.setup(t, dir, parent)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, diags := LoadDir(dir, Options{})
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %v, %d KiB allocated, %d diagnostics", c.name, elapsed.Round(time.Millisecond), alloc>>10, len(diags))
			if elapsed > c.maxTime {
				t.Errorf("took %v; want at most %v", elapsed, c.maxTime)
			}
			if alloc > c.maxAlloc {
				t.Errorf("allocated %d MiB; want at most %d MiB", alloc>>20, c.maxAlloc>>20)
			}
			if !diags.HasErrors() {
				t.Fatal("no error")
			}
			if len(diags) > MaxFileDiagnostics+1 {
				t.Errorf("%d diagnostics; want at most %d", len(diags), MaxFileDiagnostics+1)
			}
			d := diags[0]
			if !strings.Contains(d.Summary, c.summary) || !strings.Contains(d.Detail, c.detail) {
				t.Errorf("first diagnostic %q: %q; want %q and %q in them", d.Summary, d.Detail, c.summary, c.detail)
			}
			if c.at != "" {
				at := ""
				if d.Subject != nil {
					at = fmt.Sprintf("%s:%d,%d", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
				}
				if at != c.at {
					t.Errorf("diagnostic at %q; want %q", at, c.at)
				}
			}
		})
	}
}

// files returns a setup that writes the given files.
func files(m map[string]string) func(t *testing.T, dir, parent string) {
	return func(t *testing.T, dir, _ string) { writeFiles(t, dir, m) }
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLimitsAcceptRealConfigurations checks that the source checks refuse
// nothing real: the examples, the invalid-configuration cases (whose
// errors are for the parser and the evaluator to report) and inputs made to
// look deep or large to a naive count but within the limits.
func TestLimitsAcceptRealConfigurations(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "examples", "*", "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	invalid, err := filepath.Glob(filepath.Join("..", "testdata", "config", "invalid", "*", "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, invalid...)
	if len(paths) < 50 {
		t.Fatalf("found only %d files", len(paths))
	}
	for _, p := range paths {
		if strings.Contains(p, "invalid-utf8") || strings.Contains(p, "limit-") {
			continue // cases of the limits themselves
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if d := CheckSource(p, src); d != nil {
			t.Errorf("%s: %s", p, d.Error())
		}
	}
	list := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+", ", n), ", ") + "]"
	}
	within := []struct{ name, expr string }{
		{"brackets-in-strings", `"` + strings.Repeat("((([[[{{{", 2000) + `"`},
		{"brackets-in-heredoc", "<<-EOT\n" + strings.Repeat("(((\n", 2000) + "  EOT"},
		{"brackets-in-comments", "1 # " + strings.Repeat("(", 5000) + "\n  y = 2 // " + strings.Repeat("[", 5000) + "\n  z = /* " + strings.Repeat("{", 5000) + " */ 3"},
		{"escaped-quotes", `"` + strings.Repeat(`\"(`, 5000) + `"`},
		{"escaped-interpolations", `"` + strings.Repeat("$${(", 5000) + `"`},
		{"many-interpolations", `"` + strings.Repeat("${1}", 5000) + `"`},
		{"negative-numbers", list(5000, "-1")},
		{"comparisons", list(5000, "1 == 1 && 2 >= 1")},
		{"indexes", list(5000, "[1][0]")},
		{"objects-newlines", "{\n" + strings.Repeat("  a-b = 1 + 1\n", 5000) + "}"},
		{"for-object-newlines", "{\n  for k, v in { a = 1 } :\n  k => v\n}"},
		{"nesting-999", strings.Repeat("(", MaxNesting-1) + "1" + strings.Repeat(")", MaxNesting-1)},
		{"operators-999", "1" + strings.Repeat(" + 1", MaxNesting-1)},
	}
	for _, c := range within {
		t.Run(c.name, func(t *testing.T) {
			src := hostileHead + "locals {\n  x = " + c.expr + "\n}\n"
			if d := CheckSource("main.hcl", []byte(src)); d != nil {
				t.Fatalf("refused: %s", d.Error())
			}
			cfg, diags := LoadSources(map[string][]byte{"main.hcl": []byte(src)}, Options{})
			if diags.HasErrors() || cfg == nil {
				t.Fatalf("load: %s", diags.Error())
			}
		})
	}
}
