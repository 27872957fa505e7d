package alerting

import (
	"errors"
	"fmt"
	"strings"
	"text/template"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
)

// SyntaxError is a PromQL expression Prometheus's parser refuses: Start
// and End are byte offsets into the expression (End > Start).
type SyntaxError struct {
	Start, End int
	Msg        string
}

// Error returns the parser's message.
func (e *SyntaxError) Error() string { return e.Msg }

// CheckExpr parses expr with Prometheus's own PromQL parser (the options of
// a Prometheus server's defaults) and checks that it yields an instant
// vector, as an alerting rule's expression must; nil when it is valid.
func CheckExpr(expr string) *SyntaxError {
	p := parser.NewParser(parser.Options{})
	e, err := p.ParseExpr(expr)
	if err != nil {
		var errs parser.ParseErrors
		if errors.As(err, &errs) && len(errs) > 0 {
			pe := errs[0]
			start, end := clamp(int(pe.PositionRange.Start), len(expr)), clamp(int(pe.PositionRange.End), len(expr))
			return &SyntaxError{Start: start, End: max(end, start), Msg: pe.Err.Error()}
		}
		return &SyntaxError{Start: 0, End: len(expr), Msg: err.Error()}
	}
	if t := e.Type(); t != parser.ValueTypeVector && t != parser.ValueTypeScalar {
		return &SyntaxError{Start: 0, End: len(expr), Msg: fmt.Sprintf("an alerting rule's expression must give an instant vector, not a %s", t)}
	}
	return nil
}

// clamp keeps an offset within [0, n].
func clamp(i, n int) int { return min(max(i, 0), n) }

// CheckDuration reports why s is not a Prometheus duration ("15m", "1h30m").
func CheckDuration(s string) error {
	if _, err := model.ParseDuration(s); err != nil {
		return fmt.Errorf("%q is not a Prometheus duration such as \"30s\", \"15m\" or \"1h\"", s)
	}
	return nil
}

// CheckLabelName reports why name is not a label name every Prometheus
// accepts ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __).
func CheckLabelName(name string) error {
	if !model.LegacyValidation.IsValidLabelName(name) || strings.HasPrefix(name, "__") {
		return fmt.Errorf("%q is not a Prometheus label name: letters, digits and '_', not starting with a digit or \"__\"", name)
	}
	return nil
}

// CheckAlertName reports why name cannot name an alert (label alertname):
// it must be a metric name every Prometheus accepts.
func CheckAlertName(name string) error {
	if !model.LegacyValidation.IsValidMetricName(name) {
		return fmt.Errorf("%q is not a valid alert name: letters, digits, '_' and ':', not starting with a digit", name)
	}
	return nil
}

// CheckTemplate reports why text is not a Go template as Prometheus
// expands annotations ({{ $labels.pod }}, {{ $value }}).
func CheckTemplate(text string) error {
	// Prometheus defines $labels, $externalLabels and $value before the
	// text, and a set of functions; the parse here knows their names.
	defs := "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"
	_, err := template.New("annotation").Option("missingkey=zero").Funcs(templateFuncs).Parse(defs + text)
	if err != nil {
		return fmt.Errorf("not a valid template: %s", strings.TrimPrefix(err.Error(), "template: annotation:"))
	}
	return nil
}

// templateFuncs names the functions Prometheus's alert templates offer
// (prometheus/template); only their names matter to a parse.
var templateFuncs = func() template.FuncMap {
	m := template.FuncMap{}
	for _, n := range []string{"query", "first", "label", "value", "strvalue", "args", "reReplaceAll", "safeHtml", "match", "title", "toUpper", "toLower", "graphLink", "tableLink", "sortByLabel", "humanize", "humanize1024", "humanizeDuration", "humanizePercentage", "humanizeTimestamp", "toTime", "toDuration", "pathPrefix", "externalURL", "parseDuration", "now", "stripPort", "stripDomain", "urlQueryEscape"} {
		m[n] = func(...any) any { return nil }
	}
	return m
}()
