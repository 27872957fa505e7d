package cliflags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// Output is the one format flag of every command that prints a format:
// -o/--output, as kubectl and Helm spell it. Today's spellings stay as
// hidden aliases for scripts: --format (plan, show, drift) and --json.
type Output struct {
	value   string
	asJSON  bool
	formats []string
}

// Add registers -o/--output over formats (the first the default),
// with the hidden --json and, when withFormat, the hidden --format.
func Add(fs *pflag.FlagSet, o *Output, withFormat bool, formats ...string) {
	o.formats = formats
	usage := "output format: " + strings.Join(formats, ", ")
	fs.StringVarP(&o.value, "output", "o", formats[0], usage)
	if withFormat {
		fs.StringVar(&o.value, "format", formats[0], "same as --output")
		_ = fs.MarkHidden("format")
	}
	fs.BoolVar(&o.asJSON, "json", false, "same as --output json")
	_ = fs.MarkHidden("json")
}

// Format is the format asked for: --json, else -o/--output (or --format).
func (o *Output) Format() (string, error) {
	if o.asJSON {
		return "json", nil
	}
	if slices.Contains(o.formats, o.value) {
		return o.value, nil
	}
	return "", fmt.Errorf("unknown --output %q: use %s", o.value, strings.Join(o.formats, ", "))
}
