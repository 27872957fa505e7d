package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// parseFast parses src, which starts at position start, as
// hclsyntax.ParseConfig would and returns the same body, for a formatted
// subset of the native syntax: ASCII without tabs or carriage returns, line
// comments, blocks with quoted or bare labels, one argument a line, and
// expressions made of numbers, quoted strings without escapes or template
// sequences, true, false, null, attribute traversals (a.b.c), tuples and
// objects. ok is false when src is outside the subset or would not parse
// without a diagnostic; the caller then parses it with hclsyntax.
//
// The parser mirrors hclsyntax's recursive descent step by step (same
// newline sensitivity, same ranges, same node types and values) on a lexer
// that knows only the subset's tokens: any other token ends the fast parse,
// so whatever the subset does not cover falls back to hclsyntax.
func parseFast(src []byte, filename string, start hcl.Pos) (body *hclsyntax.Body, ok bool) {
	p := &fastParser{src: src, pos: start, filename: filename, newlines: []bool{true}}
	body = p.parseBody(ftEOF)
	if p.failed {
		return nil, false
	}
	return body, true
}

// fastKind is the kind of a token of parseFast's subset.
type fastKind uint8

const (
	ftBad     fastKind = iota // anything outside the subset
	ftEOF                     // end of input
	ftNewline                 // "\n", or a line comment with its newline
	ftComment                 // a line comment at the end of input, without a newline
	ftIdent
	ftNumber
	ftString // a whole quoted string without escapes or template sequences
	ftOBrace
	ftCBrace
	ftOBrack
	ftCBrack
	ftEqual
	ftComma
	ftDot
)

// fastToken is one token: its kind, its bytes (for a string, those between
// the quotes) and its range.
type fastToken struct {
	kind       fastKind
	start, end int // offsets in src of the token's bytes
	rng        hcl.Range
}

// fastParser is the state of one parseFast call.
type fastParser struct {
	src      []byte
	filename string
	off      int     // offset of the next unread byte
	pos      hcl.Pos // position of src[off]
	newlines []bool  // the peeker's include-newlines stack
	prev     hcl.Range
	failed   bool
	first    bool // whether a token has been read
	cache    fastPeek
}

// fastPeek is the token next found at offset off in newline mode nl, and
// the offset and position after it.
type fastPeek struct {
	valid bool
	off   int
	nl    bool
	tok   fastToken
	end   int
	after hcl.Pos
}

// lex returns the raw token at off (which is at pos) and the offset and
// position after it. Spaces before the token are skipped.
func (p *fastParser) lex(off int, pos hcl.Pos) (fastToken, int, hcl.Pos) {
	src := p.src
	for off < len(src) && src[off] == ' ' {
		off++
		pos.Column++
		pos.Byte++
	}
	tok := fastToken{start: off, end: off}
	tok.rng.Filename = p.filename
	tok.rng.Start = pos
	if off == len(src) {
		tok.kind = ftEOF
		tok.rng.End = pos
		return tok, off, pos
	}
	end := off + 1
	switch c := src[off]; {
	case c == '\n':
		tok.kind = ftNewline
	case c == '#' || (c == '/' && off+1 < len(src) && src[off+1] == '/'):
		return p.lexComment(tok, off, pos)
	case isIdentStart(c):
		tok.kind = ftIdent
		for end < len(src) && isIdentContinue(src[end]) {
			end++
		}
	case c >= '0' && c <= '9':
		tok.kind, end = lexNumber(src, off)
	case c == '"':
		return p.lexString(tok, off, pos)
	case c == '{':
		tok.kind = ftOBrace
	case c == '}':
		tok.kind = ftCBrace
	case c == '[':
		tok.kind = ftOBrack
	case c == ']':
		tok.kind = ftCBrack
	case c == ',':
		tok.kind = ftComma
	case c == '=':
		tok.kind = ftEqual
		if end < len(src) && (src[end] == '=' || src[end] == '>') {
			tok.kind = ftBad // "==" or "=>"
		}
	case c == '.':
		tok.kind = ftDot
		if end < len(src) && src[end] == '.' {
			tok.kind = ftBad // part of "..."
		}
	default:
		tok.kind = ftBad
	}
	tok.end = end
	if tok.kind == ftNewline {
		pos = hcl.Pos{Line: pos.Line + 1, Column: 1, Byte: pos.Byte + 1}
	} else {
		pos.Column += end - off
		pos.Byte += end - off
	}
	tok.rng.End = pos
	return tok, end, pos
}

// lexComment lexes a line comment at off: it absorbs its newline, if any.
func (p *fastParser) lexComment(tok fastToken, off int, pos hcl.Pos) (fastToken, int, hcl.Pos) {
	end := off
	for end < len(p.src) && p.src[end] != '\n' {
		if !isPlain(p.src[end]) {
			tok.kind = ftBad
			tok.end = end
			tok.rng.End = pos
			return tok, end, pos
		}
		end++
	}
	if end < len(p.src) {
		end++
		tok.kind = ftNewline
		pos = hcl.Pos{Line: pos.Line + 1, Column: 1, Byte: pos.Byte + end - off}
	} else {
		tok.kind = ftComment
		pos.Column += end - off
		pos.Byte += end - off
	}
	tok.end = end
	tok.rng.End = pos
	return tok, end, pos
}

// lexString lexes a quoted string at off. One with an escape, a template
// sequence ("$" or "%" at all, to keep it simple) or a newline is ftBad.
func (p *fastParser) lexString(tok fastToken, off int, pos hcl.Pos) (fastToken, int, hcl.Pos) {
	end := off + 1
	for ; end < len(p.src); end++ {
		c := p.src[end]
		if c == '"' {
			break
		}
		if !isPlain(c) || c == '\\' || c == '$' || c == '%' {
			tok.kind = ftBad
			return tok, end, pos
		}
	}
	if end == len(p.src) {
		tok.kind = ftBad
		return tok, end, pos
	}
	end++
	tok.kind = ftString
	tok.start, tok.end = off+1, end-1
	pos.Column += end - off
	pos.Byte += end - off
	tok.rng.End = pos
	return tok, end, pos
}

// lexNumber returns the end of the number literal at off: digits, an
// optional fraction and an optional exponent. It is ftBad when more of the
// number, an identifier or a dot follows, where hclsyntax's lexer would
// read a different token.
func lexNumber(src []byte, off int) (fastKind, int) {
	end := digitsEnd(src, off)
	if end+1 < len(src) && src[end] == '.' && isDigit(src[end+1]) {
		end = digitsEnd(src, end+1)
	}
	if end < len(src) && (src[end] == 'e' || src[end] == 'E') {
		e := end + 1
		if e < len(src) && (src[e] == '+' || src[e] == '-') {
			e++
		}
		if e < len(src) && isDigit(src[e]) {
			end = digitsEnd(src, e)
		}
	}
	if end < len(src) && (isIdentContinue(src[end]) || src[end] == '.') {
		return ftBad, end
	}
	return ftNumber, end
}

func digitsEnd(src []byte, i int) int {
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isIdentContinue(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '-' }

// isPlain reports whether c is a printable ASCII byte.
func isPlain(c byte) bool { return c >= ' ' && c < 0x7f }

// next returns the next token as hclsyntax's peeker does: newlines (and
// comments, which end with one) are skipped when the innermost context
// ignores them, a comment without a newline is always skipped.
//
// The parser peeks at most tokens before it reads them, so the last answer is
// kept for the next call at the same offset in the same mode.
func (p *fastParser) next() (fastToken, int, hcl.Pos) {
	nl := p.newlines[len(p.newlines)-1]
	if c := &p.cache; c.valid && c.off == p.off && c.nl == nl {
		return c.tok, c.end, c.after
	}
	off, pos := p.off, p.pos
	for {
		tok, end, after := p.lex(off, pos)
		switch {
		case tok.kind == ftComment:
		case tok.kind == ftNewline && !nl:
		default:
			p.cache = fastPeek{valid: true, off: p.off, nl: nl, tok: tok, end: end, after: after}
			return tok, end, after
		}
		off, pos = end, after
	}
}

// peek returns the next token without reading it. A token outside the
// subset fails the parse.
func (p *fastParser) peek() fastToken {
	tok, _, _ := p.next()
	if tok.kind == ftBad {
		p.failed = true
	}
	return tok
}

// read reads the next token.
func (p *fastParser) read() fastToken {
	tok, end, after := p.next()
	if tok.kind == ftBad {
		p.failed = true
	}
	if tok.kind != ftEOF {
		p.off, p.pos = end, after
	}
	p.prev, p.first = tok.rng, true
	return tok
}

func (p *fastParser) text(tok fastToken) string { return string(p.src[tok.start:tok.end]) }

// parseBody is hclsyntax's parser.ParseBody for a body that ends with end.
func (p *fastParser) parseBody(end fastKind) *hclsyntax.Body {
	attrs := hclsyntax.Attributes{}
	blocks := hclsyntax.Blocks{}
	startRange := p.prev
	if !p.first {
		startRange = p.peek().rng
	}
	var endRange hcl.Range
	for !p.failed {
		next := p.peek()
		if next.kind == end {
			endRange = next.rng
			p.read()
			break
		}
		switch next.kind {
		case ftNewline:
			p.read()
			continue
		case ftIdent:
			switch item := p.parseBodyItem().(type) {
			case *hclsyntax.Block:
				blocks = append(blocks, item)
			case *hclsyntax.Attribute:
				if _, dup := attrs[item.Name]; dup {
					p.failed = true
				}
				attrs[item.Name] = item
			}
			continue
		}
		p.failed = true
	}
	return &hclsyntax.Body{
		Attributes: attrs,
		Blocks:     blocks,
		SrcRange:   hcl.RangeBetween(startRange, endRange),
		EndRange:   hcl.Range{Filename: endRange.Filename, Start: endRange.End, End: endRange.End},
	}
}

// parseBodyItem is hclsyntax's parser.ParseBodyItem.
func (p *fastParser) parseBodyItem() hclsyntax.Node {
	ident := p.read()
	switch p.peek().kind {
	case ftEqual:
		return p.finishAttribute(ident, false)
	case ftString, ftOBrace, ftIdent:
		return p.finishBlock(ident)
	}
	p.failed = true
	return nil
}

// finishAttribute is hclsyntax's parser.finishParsingBodyAttribute.
func (p *fastParser) finishAttribute(ident fastToken, singleLine bool) *hclsyntax.Attribute {
	eq := p.read()
	expr := p.parseExpression()
	endRange := p.prev
	if !singleLine {
		if k := p.peek().kind; k == ftNewline || k == ftEOF {
			p.read()
		} else {
			p.failed = true
		}
	}
	return &hclsyntax.Attribute{
		Name:        p.text(ident),
		Expr:        expr,
		SrcRange:    hcl.RangeBetween(ident.rng, endRange),
		NameRange:   ident.rng,
		EqualsRange: eq.rng,
	}
}

// finishBlock is hclsyntax's parser.finishParsingBodyBlock.
func (p *fastParser) finishBlock(ident fastToken) *hclsyntax.Block {
	var labels []string
	var labelRanges []hcl.Range
	var oBrace fastToken
	for !p.failed {
		tok := p.read()
		if tok.kind == ftOBrace {
			oBrace = tok
			break
		}
		if tok.kind != ftString && tok.kind != ftIdent {
			p.failed = true
			return nil
		}
		labels = append(labels, p.text(tok))
		labelRanges = append(labelRanges, tok.rng)
	}
	var body *hclsyntax.Body
	switch p.peek().kind {
	case ftNewline, ftEOF, ftCBrace:
		body = p.parseBody(ftCBrace)
	default:
		body = p.parseSingleAttrBody()
		if p.peek().kind != ftCBrace {
			p.failed = true
		}
		p.read()
	}
	cBraceRange := p.prev
	if k := p.peek().kind; k == ftNewline || k == ftEOF {
		p.read()
	} else {
		p.failed = true
	}
	return &hclsyntax.Block{
		Type:            p.text(ident),
		Labels:          labels,
		Body:            body,
		TypeRange:       ident.rng,
		LabelRanges:     labelRanges,
		OpenBraceRange:  oBrace.rng,
		CloseBraceRange: cBraceRange,
	}
}

// parseSingleAttrBody is hclsyntax's parser.parseSingleAttrBody: the body of
// a block written on one line with one argument, like foo { bar = 1 }.
func (p *fastParser) parseSingleAttrBody() *hclsyntax.Body {
	ident := p.read()
	if ident.kind != ftIdent || p.peek().kind != ftEqual {
		p.failed = true
		return nil
	}
	attr := p.finishAttribute(ident, true)
	return &hclsyntax.Body{
		Attributes: hclsyntax.Attributes{attr.Name: attr},
		SrcRange:   attr.SrcRange,
		EndRange:   hcl.Range{Filename: attr.SrcRange.Filename, Start: attr.SrcRange.End, End: attr.SrcRange.End},
	}
}

// parseExpression is hclsyntax's parser.ParseExpression for expressions
// without operators: a term and its attribute traversals. An operator,
// index, splat or call after it is a token outside the subset, which fails
// the parse when the caller peeks at it.
func (p *fastParser) parseExpression() hclsyntax.Expression {
	if p.failed {
		return nil
	}
	term := p.parseTerm()
	for !p.failed && p.peek().kind == ftDot {
		trav, ok := term.(*hclsyntax.ScopeTraversalExpr)
		dot := p.read()
		attr := p.read()
		if !ok || attr.kind != ftIdent {
			p.failed = true
			return nil
		}
		rng := hcl.RangeBetween(dot.rng, attr.rng)
		trav.Traversal = append(trav.Traversal, hcl.TraverseAttr{Name: p.text(attr), SrcRange: rng})
		trav.SrcRange = hcl.RangeBetween(trav.SrcRange, rng)
	}
	return term
}

// parseTerm is hclsyntax's parser.parseExpressionTerm for the subset.
func (p *fastParser) parseTerm() hclsyntax.Expression {
	tok := p.read()
	switch tok.kind {
	case ftNumber:
		v, err := cty.ParseNumberVal(p.text(tok))
		if err != nil {
			p.failed = true
			return nil
		}
		return &hclsyntax.LiteralValueExpr{Val: v, SrcRange: tok.rng}
	case ftIdent:
		if k := p.peek().kind; k == ftBad {
			return nil // a call: "(" or "::"
		}
		switch name := p.text(tok); name {
		case "true":
			return &hclsyntax.LiteralValueExpr{Val: cty.True, SrcRange: tok.rng}
		case "false":
			return &hclsyntax.LiteralValueExpr{Val: cty.False, SrcRange: tok.rng}
		case "null":
			return &hclsyntax.LiteralValueExpr{Val: cty.NullVal(cty.DynamicPseudoType), SrcRange: tok.rng}
		default:
			return &hclsyntax.ScopeTraversalExpr{
				Traversal: hcl.Traversal{hcl.TraverseRoot{Name: name, SrcRange: tok.rng}},
				SrcRange:  tok.rng,
			}
		}
	case ftString:
		return p.stringExpr(tok)
	case ftOBrack:
		return p.parseTuple(tok)
	case ftOBrace:
		return p.parseObject(tok)
	}
	p.failed = true
	return nil
}

// stringExpr is the template hclsyntax builds for a quoted string without
// escapes or template sequences: one literal part between the quotes, or
// for "" an empty one at the end of the closing quote.
func (p *fastParser) stringExpr(tok fastToken) *hclsyntax.TemplateExpr {
	lit := tok.rng
	if tok.end > tok.start {
		lit.Start.Column++
		lit.Start.Byte++
		lit.End.Column--
		lit.End.Byte--
	} else {
		lit.Start = lit.End
	}
	return &hclsyntax.TemplateExpr{
		Parts:    []hclsyntax.Expression{&hclsyntax.LiteralValueExpr{Val: cty.StringVal(p.text(tok)), SrcRange: lit}},
		SrcRange: tok.rng,
	}
}

// parseTuple is hclsyntax's parser.parseTupleCons after the open bracket.
func (p *fastParser) parseTuple(open fastToken) hclsyntax.Expression {
	p.newlines = append(p.newlines, false)
	defer p.popNewlines()
	if p.isFor() {
		return nil
	}
	var exprs []hclsyntax.Expression
	var closing fastToken
	for !p.failed {
		if p.peek().kind == ftCBrack {
			closing = p.read()
			break
		}
		exprs = append(exprs, p.parseExpression())
		next := p.peek()
		if next.kind == ftCBrack {
			closing = p.read()
			break
		}
		if next.kind != ftComma {
			p.failed = true
			break
		}
		p.read()
	}
	return &hclsyntax.TupleConsExpr{Exprs: exprs, SrcRange: hcl.RangeBetween(open.rng, closing.rng), OpenRange: open.rng}
}

// parseObject is hclsyntax's parser.parseObjectCons after the open brace.
func (p *fastParser) parseObject(open fastToken) hclsyntax.Expression {
	p.newlines = append(p.newlines, false)
	isFor := p.isFor()
	p.popNewlines()
	if isFor {
		return nil
	}
	p.newlines = append(p.newlines, true)
	defer p.popNewlines()
	var items []hclsyntax.ObjectConsItem
	var closing fastToken
	for !p.failed {
		next := p.peek()
		if next.kind == ftNewline {
			p.read()
			continue
		}
		if next.kind == ftCBrace {
			closing = p.read()
			break
		}
		key := &hclsyntax.ObjectConsKeyExpr{Wrapped: p.parseExpression()}
		if p.failed || p.peek().kind != ftEqual {
			p.failed = true
			break
		}
		p.read()
		items = append(items, hclsyntax.ObjectConsItem{KeyExpr: key, ValueExpr: p.parseExpression()})
		next = p.peek()
		if next.kind == ftCBrace {
			closing = p.read()
			break
		}
		if next.kind != ftComma && next.kind != ftNewline {
			p.failed = true
			break
		}
		p.read()
	}
	return &hclsyntax.ObjectConsExpr{Items: items, SrcRange: hcl.RangeBetween(open.rng, closing.rng), OpenRange: open.rng}
}

// isFor reports (and fails the parse) when the next token is the keyword
// that starts a for expression.
func (p *fastParser) isFor() bool {
	tok := p.peek()
	if tok.kind == ftIdent && p.text(tok) == "for" {
		p.failed = true
		return true
	}
	return false
}

func (p *fastParser) popNewlines() { p.newlines = p.newlines[:len(p.newlines)-1] }
