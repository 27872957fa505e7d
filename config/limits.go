package config

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// Limits on what Load accepts, so that hostile input is a diagnostic within
// bounded time and memory, never a crash, a stack overflow or an exhausted
// machine. docs/language.md ("Limits") lists them with their diagnostics.
const (
	// MaxFileSize is the largest configuration, variables or file() input read.
	MaxFileSize = 16 << 20
	// MaxConfigSize is the most bytes of configuration, *.auto.vars.hcl and
	// --var-file files one load reads in total.
	MaxConfigSize = 32 << 20
	// MaxTokens is the most HCL tokens (words, numbers, strings,
	// punctuation, newlines) in all the files of one load. The parser and
	// the evaluator take memory in proportion to the tokens; the generated
	// benchmark configurations have about 400,000 (size M: 1,000 tenants,
	// 5,000 models) and 1,750,000 (size L: 5,000 tenants, 20,000 models).
	MaxTokens = 4_000_000
	// MaxNesting is the deepest nesting of blocks, brackets, string
	// templates and chained operators in one expression. The parser and the
	// evaluator recurse once per level; the limit is checked before parsing.
	MaxNesting = 1000
	// MaxBlocks is the most top-level blocks in all the files of one load.
	MaxBlocks = 100_000
	// MaxInstances is the most instances one for_each or count may produce.
	MaxInstances = 100_000
	// MaxTotalInstances is the most instances of all blocks together (a
	// block without for_each or count is one instance).
	MaxTotalInstances = 200_000
	// MaxCollection is the most elements a function may return in one
	// collection; setproduct and flatten check it before they build the
	// result.
	MaxCollection = 100_000
	// MaxForIterations is the most elements all the for expressions of one
	// load iterate over together (a for nested in another counts its
	// collection once per iteration of the outer one).
	MaxForIterations = 200_000
	// MaxFileDiagnostics is the most syntax errors reported for one file;
	// the rest are counted in one more diagnostic.
	MaxFileDiagnostics = 100
)

// The diagnostic of invalid UTF-8, worded as hclsyntax's.
const (
	summaryEncoding = "Invalid character encoding"
	detailEncoding  = "All input files must be UTF-8 encoded. Ensure that UTF-8 encoding is selected in your editor."
)

// sourceBudget is what is left of the per-load limits while files are read.
type sourceBudget struct {
	bytes, tokens, blocks int
	// fors receives the offsets of the keyword "for" outside strings and
	// comments, where every for expression and template for directive
	// starts, in source order.
	fors []int
}

// newSourceBudget returns the budget of one load.
func newSourceBudget() sourceBudget {
	return sourceBudget{bytes: MaxConfigSize, tokens: MaxTokens, blocks: MaxBlocks}
}

// Kinds of nesting level in scanSource.
const (
	lvBody    = iota // top level, a block body or an object: newlines separate items
	lvParen          // ( ... ): newlines ignored
	lvBracket        // [ ... ] and { for ... }: newlines ignored
	lvInterp         // ${ ... } or %{ ... } inside a template
	lvString         // "..." quoted template
	lvHeredoc        // <<EOT heredoc template
)

// scanLevel is one open nesting level of scanSource.
type scanLevel struct {
	kind int
	// ops counts the operators and openers of the current item of this
	// level: each adds at most one level to the syntax tree.
	ops int
	// marker ends a heredoc.
	marker []byte
	// chained is whether closing this level adds to its parent's ops: a
	// closed bracket may be indexed, called or operated on again, while a
	// string or an interpolation is a flat part of its template.
	chained bool
}

// CheckSource checks one HCL file against MaxTokens and MaxNesting and that
// it is valid UTF-8, before it is parsed; it returns one diagnostic at the
// first place that fails, or nil.
func CheckSource(name string, src []byte) *hcl.Diagnostic {
	b := newSourceBudget()
	return scanSource(name, src, &b, false)
}

// scanSource is CheckSource charged to budget b. It reads src once,
// tracking just enough of HCL's lexical structure (strings, heredocs,
// comments, templates) to bound the depth of the syntax tree the parser
// would build: each open bracket, block or template is a level, and each
// operator or opener in the current item (between commas, or newlines where
// newlines end an item) may nest the tree once more. The count is an upper
// bound, so it never lets through what would recurse deeper than MaxNesting.
// Tokens are counted approximately (a run of word characters, a
// punctuation character, a newline, a string literal). topBlocks charges
// the top-level blocks to b.blocks.
func scanSource(name string, src []byte, b *sourceBudget, topBlocks bool) *hcl.Diagnostic {
	stack := make([]scanLevel, 1, 16)
	stack[0] = scanLevel{kind: lvBody}
	ops := 0 // sum of stack[*].ops
	tokens := 0
	inWord := false
	fail := func(off int, summary, detail string) *hcl.Diagnostic {
		start := posAt(src, off)
		end := start
		if off < len(src) {
			_, size := utf8.DecodeRune(src[off:])
			end = hcl.Pos{Line: start.Line, Column: start.Column + 1, Byte: off + size}
		}
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  summary,
			Detail:   detail,
			Subject:  &hcl.Range{Filename: name, Start: start, End: end},
		}
	}
	tooDeep := func(off int) *hcl.Diagnostic {
		return fail(off, "Nesting too deep", fmt.Sprintf("Blocks, brackets, string templates and chained operators are nested more than %d levels deep here (config.MaxNesting); gpuform refuses the file before parsing it.", MaxNesting))
	}
	push := func(off, kind int, marker []byte, chained bool) *hcl.Diagnostic {
		stack = append(stack, scanLevel{kind: kind, marker: marker, chained: chained})
		if len(stack)-1+ops > MaxNesting {
			return tooDeep(off)
		}
		return nil
	}
	var op func(off int) *hcl.Diagnostic
	pop := func(off int) *hcl.Diagnostic {
		if len(stack) == 1 {
			return nil
		}
		closed := stack[len(stack)-1]
		ops -= closed.ops
		stack = stack[:len(stack)-1]
		if closed.chained {
			return op(off)
		}
		return nil
	}
	op = func(off int) *hcl.Diagnostic {
		stack[len(stack)-1].ops++
		ops++
		if len(stack)-1+ops > MaxNesting {
			return tooDeep(off)
		}
		return nil
	}
	endItem := func() {
		top := &stack[len(stack)-1]
		ops -= top.ops
		top.ops = 0
	}
	for i := 0; i < len(src); {
		c := src[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				return fail(i, summaryEncoding, detailEncoding)
			}
			if stack[len(stack)-1].kind < lvString && !inWord {
				inWord = true
				tokens++
			}
			i += size
			continue
		}
		if tokens > b.tokens {
			return fail(i, "Configuration too large", fmt.Sprintf("The configuration has more than %d tokens (config.MaxTokens) in all its files; gpuform stops reading here.", MaxTokens))
		}
		top := &stack[len(stack)-1]
		switch top.kind {
		case lvString:
			// Skip the plain text of the string at once.
			for c != '"' && c != '\\' && c != '$' && c != '%' && c != '\n' && c < utf8.RuneSelf {
				i++
				if i == len(src) {
					break
				}
				c = src[i]
			}
			if i == len(src) || c >= utf8.RuneSelf {
				continue
			}
			switch {
			case c == '\\':
				// Skip the escaped character unless it is not ASCII: the
				// loop checks its encoding.
				i++
				if i < len(src) && src[i] < utf8.RuneSelf {
					i++
				}
				continue
			case c == '"':
				pop(i)
			case c == '\n':
				pop(i) // unterminated: the parser reports it
				tokens++
				if stack[len(stack)-1].kind == lvBody {
					endItem()
				}
			case (c == '$' || c == '%') && i+2 < len(src) && src[i+1] == c && src[i+2] == '{':
				i += 3
				continue
			case (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == '{':
				tokens += 2
				if d := push(i, lvInterp, nil, c == '%'); d != nil {
					return d
				}
				i += 2
				continue
			}
			i++
			continue
		case lvHeredoc:
			for c != '$' && c != '%' && c != '\n' && c < utf8.RuneSelf {
				i++
				if i == len(src) {
					break
				}
				c = src[i]
			}
			if i == len(src) || c >= utf8.RuneSelf {
				continue
			}
			switch {
			case c == '\n':
				tokens++
				i++
				if end, ok := heredocEnd(src, i, top.marker); ok {
					pop(i)
					i = end
				}
				continue
			case (c == '$' || c == '%') && i+2 < len(src) && src[i+1] == c && src[i+2] == '{':
				i += 3
				continue
			case (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == '{':
				tokens += 2
				if d := push(i, lvInterp, nil, c == '%'); d != nil {
					return d
				}
				i += 2
				continue
			}
			i++
			continue
		}
		// Expression or body.
		if isWordByte(c) {
			start := i
			for i++; i < len(src) && isWordByte(src[i]); i++ {
			}
			if !inWord {
				inWord = true
				tokens++
				// Every for expression and template for directive starts
				// with this keyword outside strings.
				if i-start == 3 && string(src[start:i]) == "for" {
					b.fors = append(b.fors, start)
				}
			}
			continue
		}
		inWord = false
		switch c {
		case ' ', '\t', '\r':
			for i+1 < len(src) && (src[i+1] == ' ' || src[i+1] == '\t') {
				i++
			}
		case '\n':
			tokens++
			if top.kind == lvBody {
				endItem()
			}
		case '#':
			end, bad := lineEnd(src, i)
			if bad >= 0 {
				return fail(bad, summaryEncoding, detailEncoding)
			}
			i = end
			tokens++
			continue
		case '/':
			if i+1 < len(src) && src[i+1] == '/' {
				end, bad := lineEnd(src, i)
				if bad >= 0 {
					return fail(bad, summaryEncoding, detailEncoding)
				}
				i = end
				tokens++
				continue
			}
			if i+1 < len(src) && src[i+1] == '*' {
				end := bytes.Index(src[i+2:], []byte("*/"))
				if end < 0 {
					end = len(src)
				} else {
					end += i + 4
				}
				if !utf8.Valid(src[i:end]) {
					return fail(i+firstInvalidUTF8(src[i:end]), summaryEncoding, detailEncoding)
				}
				i = end
				tokens++
				continue
			}
			tokens++
			if d := op(i); d != nil {
				return d
			}
		case '"':
			tokens += 2
			if d := push(i, lvString, nil, false); d != nil {
				return d
			}
		case '(':
			tokens++
			if d := push(i, lvParen, nil, true); d != nil {
				return d
			}
		case '[':
			tokens++
			if d := push(i, lvBracket, nil, true); d != nil {
				return d
			}
		case '{':
			tokens++
			if topBlocks && len(stack) == 1 {
				b.blocks--
				if b.blocks < 0 {
					return fail(i, "Too many blocks", fmt.Sprintf("The configuration has more than %d top-level blocks (config.MaxBlocks) in all its files; use for_each or count to repeat a block.", MaxBlocks))
				}
			}
			kind := lvBody
			if startsFor(src, i+1) {
				kind = lvBracket
			}
			if d := push(i, kind, nil, true); d != nil {
				return d
			}
		case ')', ']', '}':
			tokens++
			if d := pop(i); d != nil {
				return d
			}
		case ',':
			tokens++
			endItem()
		case '<':
			if marker, end, ok := heredocStart(src, i); ok {
				tokens += 2
				if d := push(i, lvHeredoc, marker, false); d != nil {
					return d
				}
				i = end
				continue
			}
			tokens++
			if d := op(i); d != nil {
				return d
			}
		case '=':
			// Only == is an operator; = and => separate a name from a value.
			tokens++
			if i+1 < len(src) && src[i+1] == '=' {
				if d := op(i); d != nil {
					return d
				}
				i++
			}
		case '+', '-', '*', '%', '!', '?', '>', '&', '|':
			tokens++
			if d := op(i); d != nil {
				return d
			}
		default:
			tokens++
		}
		i++
	}
	if tokens > b.tokens {
		return fail(len(src), "Configuration too large", fmt.Sprintf("The configuration has more than %d tokens (config.MaxTokens) in all its files; gpuform stops reading here.", MaxTokens))
	}
	b.tokens -= tokens
	return nil
}

// isWordByte reports whether c continues an identifier or a number.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// lineEnd returns the offset of the newline that ends the line holding i
// (or len(src)), and the offset of the first invalid UTF-8 sequence before
// it, or -1.
func lineEnd(src []byte, i int) (int, int) {
	end := bytes.IndexByte(src[i:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += i
	}
	if utf8.Valid(src[i:end]) {
		return end, -1
	}
	return end, i + firstInvalidUTF8(src[i:end])
}

// firstInvalidUTF8 returns the offset of the first invalid UTF-8 sequence
// in b, or -1.
func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// startsFor reports whether the object braces opened just before i hold a
// for expression (whose newlines do not separate items).
func startsFor(src []byte, i int) bool {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	if i+3 >= len(src) || string(src[i:i+3]) != "for" {
		return false
	}
	i += 3
	if i < len(src) && src[i] != ' ' && src[i] != '\t' {
		return false
	}
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i < len(src) && (src[i] == '_' || src[i] >= 'a' && src[i] <= 'z' || src[i] >= 'A' && src[i] <= 'Z')
}

// heredocStart recognises "<<MARKER\n" or "<<-MARKER\n" at i, returning the
// marker and the offset after the newline.
func heredocStart(src []byte, i int) ([]byte, int, bool) {
	j := i + 2
	if j > len(src) || src[i+1] != '<' {
		return nil, 0, false
	}
	if j < len(src) && src[j] == '-' {
		j++
	}
	start := j
	for j < len(src) && (isWordByte(src[j]) || src[j] == '-') {
		j++
	}
	if j == start {
		return nil, 0, false
	}
	marker := src[start:j]
	if j < len(src) && src[j] == '\r' {
		j++
	}
	if j >= len(src) || src[j] != '\n' {
		return nil, 0, false
	}
	return marker, j + 1, true
}

// heredocEnd reports whether the line at i closes a heredoc with marker,
// and where the line's text ends (its newline stays for the caller).
func heredocEnd(src []byte, i int, marker []byte) (int, bool) {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	if i+len(marker) > len(src) || string(src[i:i+len(marker)]) != string(marker) {
		return 0, false
	}
	j := i + len(marker)
	if j < len(src) && src[j] == '\r' {
		j++
	}
	if j < len(src) && src[j] != '\n' {
		return 0, false
	}
	return j, true
}

// posAt returns the position of byte offset off in src, with the column in
// characters as HCL counts them for ASCII and most text.
func posAt(src []byte, off int) hcl.Pos {
	line, lineStart := 1, 0
	for i := 0; i < off && i < len(src); i++ {
		if src[i] == '\n' {
			line++
			lineStart = i + 1
		}
	}
	col := 1
	for i := lineStart; i < off && i < len(src); {
		_, size := utf8.DecodeRune(src[i:])
		i += size
		col++
	}
	return hcl.Pos{Line: line, Column: col, Byte: off}
}

// limitFunctions wraps the functions that can build values much larger than
// their arguments, so that their results stay within MaxCollection
// elements and MaxFileSize bytes: the growth of setproduct, flatten, join,
// replace, indent, format and formatlist is checked before the call, the
// nesting of jsondecode's input too, and every wrapped result after it.
func limitFunctions(funcs map[string]function.Function) map[string]function.Function {
	pre := map[string]func(args []cty.Value) error{
		"setproduct": checkSetProduct,
		"flatten":    checkFlatten,
		"join":       checkJoin,
		"replace":    checkReplace,
		"indent":     checkIndent,
		"format":     checkFormat,
		"formatlist": checkFormat,
		"jsondecode": checkJSONDepth,
		"csvdecode":  nil,
		"concat":     nil,
		"merge":      nil,
		"setunion":   nil,
		"zipmap":     nil,
		"split":      nil,
		"chunklist":  nil,
		"jsonencode": nil,
	}
	for name, check := range pre {
		if f, ok := funcs[name]; ok {
			funcs[name] = limitFunction(f, check)
		}
	}
	for name, want := range map[string]cty.Type{
		"tolist": cty.List(cty.DynamicPseudoType),
		"toset":  cty.Set(cty.DynamicPseudoType),
		"tomap":  cty.Map(cty.DynamicPseudoType),
	} {
		if f, ok := funcs[name]; ok {
			funcs[name] = toCollectionFunc(f, want)
		}
	}
	return funcs
}

// limitFunction wraps f with check (which may be nil) before the call and a
// size check of the result after it. The wrapper has f's parameters, so
// arguments reach it as they reach f (null, unknown and marked values
// included or not alike), and f's own call repeats none of the work.
func limitFunction(f function.Function, check func([]cty.Value) error) function.Function {
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type:        f.ReturnTypeForValues,
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if check != nil {
				known := make([]cty.Value, len(args))
				for i, a := range args {
					known[i], _ = a.UnmarkDeep()
				}
				if err := check(known); err != nil {
					return cty.NilVal, err
				}
			}
			v, err := f.Call(args)
			if err != nil {
				return v, err
			}
			return v, checkResult(v)
		},
	})
}

// checkResult refuses a known result over MaxCollection elements or
// MaxFileSize bytes.
func checkResult(v cty.Value) error {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		if n := len(v.AsString()); n > MaxFileSize {
			return fmt.Errorf("the result would be %d bytes; the limit is %d (config.MaxFileSize)", n, MaxFileSize)
		}
	case ty.IsCollectionType() || ty.IsTupleType():
		if n := v.LengthInt(); n > MaxCollection {
			return fmt.Errorf("the result would have %d elements; the limit is %d (config.MaxCollection)", n, MaxCollection)
		}
	}
	return nil
}

// lengthOf is the length of a known collection or string argument, else 0.
func lengthOf(v cty.Value) int {
	if !v.IsKnown() || v.IsNull() {
		return 0
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return len(v.AsString())
	case ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType():
		return v.LengthInt()
	}
	return 0
}

// tooManyElements is the error of a call that would make at least n >
// MaxCollection elements.
func tooManyElements(n int) error {
	return fmt.Errorf("the result would have %d or more elements; the limit is %d (config.MaxCollection), so it is not built", n, MaxCollection)
}

// tooLarge is the error of a call that would make a string of at least n >
// MaxFileSize bytes.
func tooLarge(n int) error {
	return fmt.Errorf("the result would be %d or more bytes; the limit is %d (config.MaxFileSize), so it is not built", n, MaxFileSize)
}

// checkSetProduct bounds the product of the sets' sizes.
func checkSetProduct(args []cty.Value) error {
	n := 1
	for _, a := range args {
		n *= lengthOf(a)
		if n > MaxCollection {
			return tooManyElements(n)
		}
		if n == 0 {
			return nil
		}
	}
	return nil
}

// checkFlatten bounds the elements of the flattened list.
func checkFlatten(args []cty.Value) error {
	n := 0
	var count func(v cty.Value) bool
	count = func(v cty.Value) bool {
		ty := v.Type()
		if !v.IsKnown() || v.IsNull() || !(ty.IsListType() || ty.IsSetType() || ty.IsTupleType()) {
			n++
			return n <= MaxCollection
		}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if !count(e) {
				return false
			}
		}
		return true
	}
	if len(args) == 1 && !count(args[0]) {
		return tooManyElements(n)
	}
	return nil
}

// checkJoin bounds the joined string: the elements plus a separator
// between each two.
func checkJoin(args []cty.Value) error {
	if len(args) == 0 {
		return nil
	}
	sep := lengthOf(args[0])
	n := 0
	for _, l := range args[1:] {
		if !l.IsKnown() || l.IsNull() || !l.CanIterateElements() {
			continue
		}
		for it := l.ElementIterator(); it.Next(); {
			_, e := it.Element()
			n += sep + lengthOf(e)
			if n > MaxFileSize {
				return tooLarge(n)
			}
		}
	}
	return nil
}

// checkReplace bounds a plain (not /regex/) replacement exactly.
func checkReplace(args []cty.Value) error {
	if len(args) != 3 {
		return nil
	}
	for _, a := range args {
		if !a.IsKnown() || a.IsNull() || a.Type() != cty.String {
			return nil
		}
	}
	s, sub, repl := args[0].AsString(), args[1].AsString(), args[2].AsString()
	if len(sub) >= 2 && sub[0] == '/' && sub[len(sub)-1] == '/' {
		return nil
	}
	if len(repl) <= len(sub) {
		return nil
	}
	matches := strings.Count(s, sub)
	if sub == "" {
		matches = utf8.RuneCountInString(s) + 1
	}
	if n := len(s) + matches*(len(repl)-len(sub)); n > MaxFileSize {
		return tooLarge(n)
	}
	return nil
}

// checkIndent bounds the prefix added to every line.
func checkIndent(args []cty.Value) error {
	if len(args) != 2 || !args[0].IsKnown() || args[0].IsNull() || args[0].Type() != cty.Number ||
		!args[1].IsKnown() || args[1].IsNull() || args[1].Type() != cty.String {
		return nil
	}
	spaces, _ := args[0].AsBigFloat().Int64()
	s := lengthOf(args[1])
	lines := strings.Count(args[1].AsString(), "\n")
	if n := int64(s) + int64(lines)*max(spaces, 0); n > MaxFileSize {
		return tooLarge(int(min(n, 1<<40)))
	}
	return nil
}

// checkFormat bounds the padding a format string asks for: the sum of its
// widths and precisions (fmt itself caps each at a million).
func checkFormat(args []cty.Value) error {
	if len(args) == 0 || !args[0].IsKnown() || args[0].IsNull() || args[0].Type() != cty.String {
		return nil
	}
	f := args[0].AsString()
	total := len(f)
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		for i++; i < len(f) && !(f[i] >= 'a' && f[i] <= 'z' || f[i] >= 'A' && f[i] <= 'Z' || f[i] == '%'); i++ {
			if f[i] < '0' || f[i] > '9' {
				continue
			}
			w := 0
			for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
				w = min(w*10+int(f[i]-'0'), MaxFileSize+1)
			}
			total += w
			if total > MaxFileSize {
				return tooLarge(total)
			}
			i--
		}
	}
	return nil
}

// checkJSONDepth refuses JSON nested deeper than MaxNesting, which the
// decoder would follow by recursion.
func checkJSONDepth(args []cty.Value) error {
	if len(args) != 1 || !args[0].IsKnown() || args[0].IsNull() || args[0].Type() != cty.String {
		return nil
	}
	s := args[0].AsString()
	depth, inString := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			if depth > MaxNesting {
				return fmt.Errorf("the JSON is nested more than %d levels deep (config.MaxNesting)", MaxNesting)
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}

// forIterFunc is the function limitForExprs wraps around the collection of
// every for expression; it counts the elements iterated against
// MaxForIterations. Its name is what a diagnostic shows.
const forIterFunc = "for"

// limitForExprsAt is limitForExprs on the top-level blocks and attributes
// of body that hold one of the offsets of the keyword "for" that scanSource
// found (sorted), so that a configuration without for expressions costs no
// walk and one with a few costs a walk of the blocks that hold them.
func limitForExprsAt(body *hclsyntax.Body, fors []int) {
	if len(fors) == 0 {
		return
	}
	holds := func(r hcl.Range) bool {
		i := sort.SearchInts(fors, r.Start.Byte)
		return i < len(fors) && fors[i] < r.End.Byte
	}
	for _, b := range body.Blocks {
		if holds(b.Range()) {
			limitForExprs(b)
		}
	}
	for _, a := range body.Attributes {
		if holds(a.SrcRange) {
			limitForExprs(a.Expr)
		}
	}
}

// limitForExprs wraps the collection of every for expression (and template
// for directive) under node in a call of forIterFunc, so that nested for
// expressions cannot iterate without bound: a for expression is the one
// construct whose cost is not bounded by its input's size.
func limitForExprs(node hclsyntax.Node) {
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		fe, ok := n.(*hclsyntax.ForExpr)
		if !ok {
			return nil
		}
		if call, ok := fe.CollExpr.(*hclsyntax.FunctionCallExpr); ok && call.Name == forIterFunc {
			return nil
		}
		rng := fe.CollExpr.Range()
		fe.CollExpr = &hclsyntax.FunctionCallExpr{
			Name:            forIterFunc,
			Args:            []hclsyntax.Expression{fe.CollExpr},
			NameRange:       rng,
			OpenParenRange:  rng,
			CloseParenRange: rng,
		}
		return nil
	})
}

// forIterations returns forIterFunc for one load: the identity on its
// argument, counting the elements of every collection a for expression
// iterates into count and failing once they pass MaxForIterations.
func forIterations(count *atomic.Int64) function.Function {
	return function.New(&function.Spec{
		Description: "Counts the elements for expressions iterate over.",
		Params: []function.Parameter{{
			Name: "collection", Type: cty.DynamicPseudoType,
			AllowUnknown: true, AllowNull: true, AllowMarked: true, AllowDynamicType: true,
		}},
		Type: func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, _ := args[0].Unmark()
			if v.IsKnown() && !v.IsNull() && v.CanIterateElements() {
				if count.Add(int64(v.LengthInt())) > MaxForIterations {
					return cty.NilVal, fmt.Errorf("the for expressions of the configuration have iterated over more than %d elements in all (config.MaxForIterations); nested for expressions multiply their collections' sizes", MaxForIterations)
				}
			}
			return args[0], nil
		},
	})
}

// maxUnify is the most elements of a tuple or object converted to a
// collection of any whose elements differ in type: go-cty infers the
// element type by sorting the elements' types in quadratic time (100,000
// strings take minutes). Elements of one type need no inference and have
// no such limit.
const maxUnify = 1000

// unifiedType returns want with its element type inferred when want is a
// collection of any and from is a tuple or object type whose elements share
// one type, so that converting needs no unification. It fails when from
// has more than maxUnify elements of different types.
func unifiedType(from, want cty.Type) (cty.Type, error) {
	if !want.IsCollectionType() || want.ElementType() != cty.DynamicPseudoType {
		return want, nil
	}
	var elems []cty.Type
	switch {
	case from.IsTupleType():
		elems = from.TupleElementTypes()
	case from.IsObjectType():
		for _, t := range from.AttributeTypes() {
			elems = append(elems, t)
		}
	}
	if len(elems) == 0 {
		return want, nil
	}
	first := elems[0]
	for _, t := range elems[1:] {
		if !t.Equals(first) {
			if len(elems) > maxUnify {
				return want, fmt.Errorf("the %d elements are of different types; gpuform infers a common type for at most %d", len(elems), maxUnify)
			}
			return want, nil
		}
	}
	if first == cty.DynamicPseudoType {
		return want, nil
	}
	switch {
	case want.IsListType():
		return cty.List(first), nil
	case want.IsSetType():
		return cty.Set(first), nil
	default:
		return cty.Map(first), nil
	}
}

// convertUnified is convert.Convert through unifiedType.
func convertUnified(v cty.Value, want cty.Type) (cty.Value, error) {
	ty, err := unifiedType(v.Type(), want)
	if err != nil {
		return cty.NilVal, err
	}
	return convertCollection(v, ty)
}

// toCollectionFunc is orig (tolist, toset or tomap to a collection of any)
// with the element type inferred by unifiedType when it can be.
func toCollectionFunc(orig function.Function, want cty.Type) function.Function {
	return function.New(&function.Spec{
		Description: orig.Description(),
		Params: []function.Parameter{{
			Name: "v", Type: cty.DynamicPseudoType,
			AllowUnknown: true, AllowNull: true, AllowMarked: true, AllowDynamicType: true,
		}},
		Type: func(args []cty.Value) (cty.Type, error) {
			ty, err := unifiedType(args[0].Type(), want)
			if err != nil {
				return cty.NilType, function.NewArgError(0, err)
			}
			if ty.Equals(want) || convert.GetConversionUnsafe(args[0].Type(), ty) == nil {
				return orig.ReturnTypeForValues(args)
			}
			return ty, nil
		},
		Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
			if retType.ElementType() == cty.DynamicPseudoType {
				return orig.Call(args)
			}
			return convertCollection(args[0], retType)
		},
	})
}

// bigTuple is the length from which convertCollection converts a tuple or
// object element by element instead of through go-cty, whose conversion to
// a list, set or map unifies the elements' types in quadratic time even
// when the element type is given.
const bigTuple = 64

// convertCollection is convert.Convert, in linear time for a large known
// tuple or object converted to a list, set or map of a known element type.
func convertCollection(v cty.Value, want cty.Type) (cty.Value, error) {
	vt := v.Type()
	if !want.IsCollectionType() || want.ElementType().HasDynamicTypes() ||
		!(vt.IsTupleType() && len(vt.TupleElementTypes()) >= bigTuple || vt.IsObjectType() && len(vt.AttributeTypes()) >= bigTuple) {
		return convert.Convert(v, want)
	}
	uv, marks := v.Unmark()
	if !uv.IsKnown() || uv.IsNull() || want.IsMapType() != vt.IsObjectType() {
		return convert.Convert(v, want)
	}
	et := want.ElementType()
	var list []cty.Value
	var m map[string]cty.Value
	if want.IsMapType() {
		m = make(map[string]cty.Value, uv.LengthInt())
	} else {
		list = make([]cty.Value, 0, uv.LengthInt())
	}
	for it := uv.ElementIterator(); it.Next(); {
		k, e := it.Element()
		ce, err := convert.Convert(e, et)
		if err != nil {
			if vt.IsObjectType() {
				return cty.NilVal, fmt.Errorf("element %q: %w", k.AsString(), err)
			}
			return cty.NilVal, fmt.Errorf("element %s: %w", k.AsBigFloat().Text('f', -1), err)
		}
		if m != nil {
			m[k.AsString()] = ce
		} else {
			list = append(list, ce)
		}
	}
	var out cty.Value
	switch {
	case want.IsMapType():
		out = cty.MapVal(m)
	case want.IsSetType():
		out = cty.SetVal(list)
	default:
		out = cty.ListVal(list)
	}
	return out.WithMarks(marks), nil
}

// sourceNav is the navigation of a file refused before parsing (see
// loader.checkSource), so that its diagnostic still names the enclosing
// block: found from the text, as the last line at or before the offset that
// starts a top-level block ("tenant "research" {" at column 1), unless a
// line holding only "}" closed it. It runs only when rendering such a
// diagnostic.
type sourceNav struct{ src []byte }

// SourceNav returns the navigation of a file CheckSource refused, which
// names the block enclosing a diagnostic from the file's text.
func SourceNav(src []byte) any { return sourceNav{src} }

// ContextString implements hcled.ContextString.
func (n sourceNav) ContextString(offset int) string {
	offset = min(max(offset, 0), len(n.src))
	lineStart := bytes.LastIndexByte(n.src[:offset], '\n') + 1
	for {
		lineEnd := bytes.IndexByte(n.src[lineStart:], '\n')
		if lineEnd < 0 {
			lineEnd = len(n.src)
		} else {
			lineEnd += lineStart
		}
		line := bytes.TrimRight(n.src[lineStart:lineEnd], " \t\r")
		switch {
		case lineEnd < offset && len(line) == 1 && line[0] == '}':
			return ""
		case len(line) > 1 && line[len(line)-1] == '{' && (line[0] == '_' || line[0] >= 'a' && line[0] <= 'z' || line[0] >= 'A' && line[0] <= 'Z'):
			return string(bytes.TrimSpace(line[:len(line)-1]))
		case lineStart == 0:
			return ""
		}
		lineStart = bytes.LastIndexByte(n.src[:lineStart-1], '\n') + 1
	}
}
