package config

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Bounds of TestEvaluationBudget: failure guards, not performance targets
// (each case takes well under a second and a few tens of megabytes; before
// the budget, each ran for minutes or until memory ran out).
const (
	budgetGuard  = 10 * time.Second
	budgetGrowth = 256 << 20
)

// chain is a locals block of depth+1 values: <name>00 = first, then each
// <name>NN = step with %[1]s standing for the previous one, followed by
// the lines of tail.
func chain(name string, depth int, first, step string, tail ...string) string {
	var b strings.Builder
	b.WriteString(hostileHead + "locals {\n")
	fmt.Fprintf(&b, "  %s00 = %s\n", name, first)
	for i := 1; i <= depth; i++ {
		prev := fmt.Sprintf("local.%s%02d", name, i-1)
		fmt.Fprintf(&b, "  %s%02d = %s\n", name, i, fmt.Sprintf(step, prev))
	}
	for _, line := range tail {
		b.WriteString("  " + line + "\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// doubling is the chain of locals in which each is a tuple of the previous
// one twice: 40 levels are a few kilobytes in memory and 2^40 numbers to
// walk.
func doubling(depth int, tail ...string) string {
	return chain("t", depth, "[1]", "[%[1]s, %[1]s]", tail...)
}

// repeat is n times item, separated by commas.
func repeat(item string, n int) string {
	return strings.TrimSuffix(strings.Repeat(item+", ", n), ", ")
}

// TestEvaluationBudget loads configurations that build values far larger
// than their source, or compare, encode and deduplicate them, and checks
// that each is refused with one diagnostic naming the limit and the block
// that went over it, in bounded time and memory.
func TestEvaluationBudget(t *testing.T) {
	// Line of the first local of a chain (after hostileHead and "locals {").
	const first = 5
	big := strings.Repeat("x", 10<<20)
	mib := strings.Repeat("y", 1<<20)
	cases := []struct {
		name  string
		files map[string]string
		// summary and detail are parts of the error's texts; block is the
		// block the detail names; at is the error's file:line,col.
		summary, detail, block, at string
	}{
		{
			// Each local doubles a 32-byte string: local.s20 would be 32 MiB.
			name:    "string-doubling",
			files:   map[string]string{"main.hcl": chain("s", 40, `"`+strings.Repeat("x", 32)+`"`, `"${%[1]s}${%[1]s}"`)},
			summary: "String too long", detail: "more than 16777216 bytes (config.MaxFileSize)",
			block: "local.s20", at: fmt.Sprintf("main.hcl:%d,24", first+20),
		},
		{
			// Tuples that hold the previous one twice, compared: local.t19
			// is over the limit (2^19 numbers).
			name:    "nested-tuples-equal",
			files:   map[string]string{"main.hcl": doubling(40, "eq = local.t40 == local.t40")},
			summary: "Value too large", detail: "over 67108864 bytes (config.MaxValueSize)",
			block: "local.t19", at: fmt.Sprintf("main.hcl:%d,9", first+19),
		},
		{
			name:    "nested-tuples-jsonencode",
			files:   map[string]string{"main.hcl": doubling(40, "j = jsonencode(local.t40)")},
			summary: "Value too large", detail: "config.MaxValueSize",
			block: "local.t19", at: fmt.Sprintf("main.hcl:%d,9", first+19),
		},
		{
			name:    "nested-tuples-distinct",
			files:   map[string]string{"main.hcl": doubling(40, "d = distinct([local.t40, local.t40])")},
			summary: "Value too large", detail: "config.MaxValueSize",
			block: "local.t19", at: fmt.Sprintf("main.hcl:%d,9", first+19),
		},
		{
			// Every local is within the limit; the operand of == is not.
			name:    "equal-operand",
			files:   map[string]string{"main.hcl": doubling(18, "eq = ["+repeat("local.t18", 8)+"] == ["+repeat("local.t18", 8)+"]")},
			summary: "Value too large", detail: "config.MaxValueSize",
			block: "local.eq", at: fmt.Sprintf("main.hcl:%d,8", first+19),
		},
		{
			name:    "jsonencode-argument",
			files:   map[string]string{"main.hcl": doubling(18, "j = jsonencode(["+repeat("local.t18", 8)+"])")},
			summary: "Value too large", detail: "config.MaxValueSize",
			block: "local.j", at: fmt.Sprintf("main.hcl:%d,18", first+19),
		},
		{
			name:    "distinct-argument",
			files:   map[string]string{"main.hcl": doubling(18, "d = distinct(["+repeat("local.t18", 8)+"])")},
			summary: "Value too large", detail: "config.MaxValueSize",
			block: "local.d", at: fmt.Sprintf("main.hcl:%d,16", first+19),
		},
		{
			name:    "conditional-result",
			files:   map[string]string{"main.hcl": doubling(18, "c = true ? ["+repeat("local.t18", 8)+"] : []")},
			summary: "Value too large", detail: "config.MaxValueSize",
			block: "local.c", at: fmt.Sprintf("main.hcl:%d,14", first+19),
		},
		{
			name: "template-over-MaxFileSize",
			files: map[string]string{"big.txt": big, "main.hcl": hostileHead +
				"locals {\n  s = file(\"big.txt\")\n  x = \"${local.s}${local.s}\"\n}\n"},
			summary: "String too long", detail: "config.MaxFileSize",
			block: "local.x", at: "main.hcl:6,20",
		},
		{
			name: "template-for-directive-over-MaxFileSize",
			files: map[string]string{"mib.txt": mib, "main.hcl": hostileHead +
				"locals {\n  s = file(\"mib.txt\")\n  x = \"%{ for i in range(20) }${local.s}%{ endfor }\"\n}\n"},
			summary: "String too long", detail: "config.MaxFileSize",
			block: "local.x", at: "main.hcl:6,8",
		},
		{
			// A number of 600 million digits, as a string.
			name:    "number-in-template",
			files:   map[string]string{"main.hcl": hostileHead + "locals {\n  x = \"n=${1e600000000}\"\n}\n"},
			summary: "String too long", detail: "config.MaxFileSize",
			block: "local.x", at: "main.hcl:5,12",
		},
		{
			name:    "number-value",
			files:   map[string]string{"main.hcl": hostileHead + "locals {\n  n = 1e600000000\n  x = tostring(local.n)\n}\n"},
			summary: "Value too large", detail: "config.MaxValueSize",
			block: "local.x", at: "main.hcl:6,16",
		},
		{
			// Each use of a 10 MiB string counts 10 MiB: 200 of them pass
			// MaxEvalBytes.
			name: "budget-spent",
			files: map[string]string{"big.txt": big, "main.hcl": hostileHead +
				"locals {\n  s = file(\"big.txt\")\n  n = [for i in range(200) : local.s == \"\"]\n}\n"},
			summary: "Evaluation budget spent", detail: "more than 1073741824 bytes of values in all (config.MaxEvalBytes)",
			block: "local.n", at: "main.hcl:6,30",
		},
		{
			// A function's string argument counts 64 bytes a byte: 100
			// calls of upper on 1 MiB pass MaxEvalBytes.
			name: "budget-spent-on-string-functions",
			files: map[string]string{"mib.txt": mib, "main.hcl": hostileHead +
				"locals {\n  s = file(\"mib.txt\")\n  u = [for i in range(100) : upper(local.s)]\n}\n"},
			summary: "Evaluation budget spent", detail: "config.MaxEvalBytes",
			block: "local.u", at: "main.hcl:6,36",
		},
		{
			// A function's argument counts 16 times (or as many times as it
			// is deep): jsonencode of 2^18 numbers 19 levels deep takes
			// seconds.
			name:    "budget-spent-on-function-arguments",
			files:   map[string]string{"main.hcl": doubling(18, "j = [for i in range(1000) : jsonencode(local.t18)]")},
			summary: "Evaluation budget spent", detail: "config.MaxEvalBytes",
			block: "local.j", at: fmt.Sprintf("main.hcl:%d,42", first+19),
		},
		{
			// Set operations count their arguments 512 times: go-cty hashes
			// and sorts every element.
			name: "budget-spent-on-set-operations",
			files: map[string]string{"main.hcl": hostileHead + "locals {\n  f = [for i in flatten([for j in range(10) : range(1000)]) : \"s${i}\"]\n" +
				"  u = [for i in range(100) : setunion(local.f, local.f)]\n}\n"},
			summary: "Evaluation budget spent", detail: "config.MaxEvalBytes",
			block: "local.u", at: "main.hcl:6,48",
		},
		{
			// A function's result is measured too: 90,000 pairs of 1 KiB
			// strings.
			name: "function-result",
			files: map[string]string{"main.hcl": hostileHead + "locals {\n  k = \"" + strings.Repeat("k", 1024) + "\"\n" +
				"  l = [for i in range(300) : \"${local.k}${i}\"]\n  n = length(setproduct(local.l, local.l))\n}\n"},
			summary: "Value too large", detail: "config.MaxValueSize",
			block: "local.n", at: "main.hcl:7,14",
		},
		{
			// 50 products of 10,000 pairs of 1 KiB strings (22 MiB each)
			// pass MaxEvalBytes, where their arguments (4 MiB a call)
			// would not.
			name: "function-results-budget",
			files: map[string]string{"main.hcl": hostileHead + "locals {\n  k = \"" + strings.Repeat("k", 1024) + "\"\n" +
				"  l = [for i in range(100) : \"${local.k}${i}\"]\n  x = [for i in range(50) : setproduct(local.l, local.l)]\n}\n"},
			summary: "Evaluation budget spent", detail: "config.MaxEvalBytes",
			block: "local.x", at: "main.hcl:7,29",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, c.files)
			diags := loadGuarded(t, dir)
			if !diags.HasErrors() {
				t.Fatal("no error")
			}
			var d *hcl.Diagnostic
			for _, x := range diags {
				if x.Severity == hcl.DiagError && strings.Contains(x.Summary, c.summary) {
					d = x
					break
				}
			}
			if d == nil {
				t.Fatalf("no %q error in:\n%s", c.summary, strings.Join(diagLines(diags), "\n"))
			}
			if !strings.Contains(d.Detail, c.detail) || !strings.Contains(d.Detail, " in "+c.block+" ") && !strings.Contains(d.Detail, " in "+c.block+";") {
				t.Errorf("detail %q; want %q and the block %s in it", d.Detail, c.detail, c.block)
			}
			at := ""
			if d.Subject != nil {
				at = fmt.Sprintf("%s:%d,%d", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
			}
			if at != c.at {
				t.Errorf("diagnostic at %q; want %q", at, c.at)
			}
			if n := len(diags); n > 3 {
				t.Errorf("%d diagnostics; want the one (and what it makes fail):\n%s", n, strings.Join(diagLines(diags), "\n"))
			}
		})
	}
}

// loadGuarded loads dir, failing the test when the load takes longer than
// budgetGuard or the heap grows by more than budgetGrowth (sampled every
// few milliseconds while it runs).
func loadGuarded(t *testing.T, dir string) hcl.Diagnostics {
	t.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	done := make(chan hcl.Diagnostics, 1)
	go func() {
		_, diags := LoadDir(dir, Options{})
		done <- diags
	}()
	peak := before.HeapAlloc
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(budgetGuard)
	var diags hcl.Diagnostics
	for waiting := true; waiting; {
		select {
		case diags = <-done:
			waiting = false
		case <-tick.C:
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			if peak-before.HeapAlloc > budgetGrowth {
				t.Fatalf("the heap grew by %d MiB after %v; want at most %d MiB", (peak-before.HeapAlloc)>>20, time.Since(start), budgetGrowth>>20)
			}
		case <-deadline:
			t.Fatalf("the load has not returned after %v", budgetGuard)
		}
	}
	runtime.ReadMemStats(&after)
	peak = max(peak, after.HeapAlloc)
	t.Logf("%v, %d MiB allocated, heap grew by at most %d MiB", time.Since(start).Round(time.Millisecond), (after.TotalAlloc-before.TotalAlloc)>>20, (peak-before.HeapAlloc)>>20)
	if peak-before.HeapAlloc > budgetGrowth {
		t.Errorf("the heap grew by %d MiB; want at most %d MiB", (peak-before.HeapAlloc)>>20, budgetGrowth>>20)
	}
	return diags
}

// TestDistinctIsLinear: distinct over 100,000 different numbers, which
// go-cty's distinct compares pairwise (hours), loads in bounded time.
func TestDistinctIsLinear(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.hcl": hostileHead +
		"locals {\n  d = distinct(flatten([for i in range(200) : [for j in range(500) : i * 500 + j % 250]]))\n}\n"})
	if diags := loadGuarded(t, dir); diags.HasErrors() {
		t.Fatal(strings.Join(diagLines(diags), "\n"))
	}
	cfg, diags, l := loadFS(mapFS(map[string][]byte{"main.hcl": []byte(hostileHead + "locals {\n  d = distinct([1, 2, 1, \"1\", 3, 2])\n}\n")}), Options{})
	if diags.HasErrors() || cfg == nil {
		t.Fatal(strings.Join(diagLines(diags), "\n"))
	}
	if got := l.nodes["local.d"].value.GoString(); got != `cty.ListVal([]cty.Value{cty.StringVal("1"), cty.StringVal("2"), cty.StringVal("3")})` {
		t.Errorf("distinct = %s", got)
	}
}

// TestValueSizeOfSharedTuples: measuring a value that holds the same tuple
// many times over stops at the limit, in steps proportional to the limit.
func TestValueSizeOfSharedTuples(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.hcl": doubling(12)})
	_, diags, l := loadFS(os.DirFS(dir), Options{})
	if diags.HasErrors() {
		t.Fatal(strings.Join(diagLines(diags), "\n"))
	}
	v := l.nodes["local.t12"].value
	s := measureValue(v, MaxValueSize)
	// t00 = [1] is one tuple and one number; each level doubles them and
	// adds a tuple: 8191 tuples and 4096 numbers.
	if want := 8191*ElementSize + 4096*(ElementSize+numberDigits(cty.NumberIntVal(1))); s.size != want || s.over || !s.known {
		t.Errorf("size %d over %v known %v; want %d, false, true", s.size, s.over, s.known, want)
	}
	if s := measureValue(v, 1000); !s.over || s.size > 1000+2*ElementSize {
		t.Errorf("with limit 1000: size %d over %v; want the walk stopped just past 1000", s.size, s.over)
	}
}
