package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// minChunk is the shortest piece of a string literal that counts as
// printing part of a message: shorter ones ("%s: %w") are punctuation.
const minChunk = 4

var verb = regexp.MustCompile(`%[-+# 0-9.*\[\]]*[a-zA-Z%]`)

// Chunks returns the pieces between format verbs of every string literal
// of the non-test Go files under dir (testdata and hidden directories
// left out): what the program can print verbatim.
func Chunks(dir string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != dir && (n == "testdata" || strings.HasPrefix(n, ".") || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, c := range verb.Split(s, -1) {
				for _, line := range strings.Split(c, "\n") {
					if len(strings.TrimSpace(line)) >= minChunk && !seen[line] {
						seen[line] = true
						out = append(out, line)
					}
				}
			}
			return true
		})
		return nil
	})
	return out, err
}

// placeholder is what a document writes for a part of a message it leaves
// out or names generically: "...", "…", "<file>".
var placeholder = regexp.MustCompile(`\.\.\.|…|<[^<>]+>`)

// quoted is a value a document quotes inside a message.
var quoted = regexp.MustCompile(`"[^"]*"`)

// Uncovered returns the stretches of msg of two or more words that no
// chunk prints: a message the program cannot print. Placeholders, quoted
// values and single words (values such as a name or a number, but not a
// capitalised word) are not required to appear in a chunk. Beside a placeholder the document may have
// cut a chunk: the text after one may be a chunk's end, the text before one
// a chunk's start, and the text between two any part of a chunk.
func Uncovered(msg string, chunks []string) []string {
	var out []string
	locs := placeholder.FindAllStringIndex(msg, -1)
	from := 0
	for k := 0; k <= len(locs); k++ {
		to := len(msg)
		if k < len(locs) {
			to = locs[k][0]
		}
		out = append(out, uncoveredPiece(msg[from:to], k > 0, k < len(locs), chunks)...)
		if k < len(locs) {
			from = locs[k][1]
		}
	}
	return out
}

// uncoveredPiece is Uncovered for a stretch of a message between
// placeholders; cutStart and cutEnd say whether one is before or after it.
func uncoveredPiece(p string, cutStart, cutEnd bool, chunks []string) []string {
	if cutStart && cutEnd && len(strings.TrimSpace(p)) >= minChunk && inAny(strings.TrimSpace(p), chunks) {
		return nil
	}
	covered := make([]bool, len(p))
	cover := func(i, j int) {
		for ; i < j; i++ {
			covered[i] = true
		}
	}
	for _, loc := range quoted.FindAllStringIndex(p, -1) {
		cover(loc[0], loc[1])
	}
	for _, c := range chunks {
		for from := 0; from < len(p); {
			i := strings.Index(p[from:], c)
			if i < 0 {
				break
			}
			cover(from+i, from+i+len(c))
			from += i + 1
		}
	}
	if cutStart {
		cover(0, longest(p, minChunk, func(l int) string { return p[:l] }, strings.HasSuffix, chunks))
	}
	if cutEnd {
		cover(len(p)-longest(p, minChunk, func(l int) string { return p[len(p)-l:] }, strings.HasPrefix, chunks), len(p))
	}
	var out []string
	for i := 0; i < len(p); {
		if covered[i] {
			i++
			continue
		}
		j := i
		for j < len(p) && !covered[j] {
			j++
		}
		if run := strings.Trim(p[i:j], " .,:;()'`"); strings.Contains(run, " ") || word.MatchString(run) {
			out = append(out, run)
		}
		i = j
	}
	return out
}

// word is a capitalised word: a sentence's first word, which a message
// prints, rather than a value (a name, a number, a path, a kind's plural).
var word = regexp.MustCompile(`^[A-Z][a-z]+$`)

// longest is the greatest length l >= min for which some chunk c has
// match(c, part(l)), or 0.
func longest(p string, min int, part func(int) string, match func(string, string) bool, chunks []string) int {
	for l := len(p); l >= min; l-- {
		s := part(l)
		for _, c := range chunks {
			if match(c, s) {
				return l
			}
		}
	}
	return 0
}

// inAny reports whether s is part of one of chunks.
func inAny(s string, chunks []string) bool {
	for _, c := range chunks {
		if strings.Contains(c, s) {
			return true
		}
	}
	return false
}
