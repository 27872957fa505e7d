package compile_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"reflect"
	"slices"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// Compile's output is the same, value for value and type for type, as
// when these digests were taken (commit 1c52a03), and so are the maps its
// objects share (retaken when a model's resources map became one per
// resource and count, and when the backends got maps of each model's own,
// shared only once the object is added: content digests unchanged each
// time; retaken when the registry got DeviceClass, which changes only the
// desired kinds list): a change that makes compile cheaper must not change what
// it compiles, nor which maps are one copy; the key each object keeps
// (engine.Object.CacheKey) is its key. A digest changes only with a
// change of compile's output meant by the commit that changes it.
func TestCompileUnchanged(t *testing.T) {
	tests := []struct {
		name string
		load func(t *testing.T) *config.Config
		want string
	}{
		{"bank-kueue", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "bank") }, "5af7eae1a8bed6f59de3abeff1b1ddae12982d8cf0aa40f723e18c323e5444b2"},
		{"bank-volcano", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", enginetest.BankUnder("volcano")...)
		}, "bdfe23f9a4e5feefd23435be6f6ee0767a87664300e52681057d9848f071673b"},
		{"bank-agent", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", append(enginetest.BankUnder("none"), `scheduler = "none"`, `mig_backend = "agent"`)...)
		}, "8b4465e61efbd090dbf41da421079953715738740d964de48820f0c23142aa50"},
		{"bank-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", enginetest.BankUnder("none")...)
		}, "ae5fd9fb45167c5bd4d597086e4dbf9557c279ce49f56238875204e11dac5003"},
		{"quickstart", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "quickstart") }, "60418b45c0af1a80d20217d625a55f5e1b42bcd85afdca88b4b4680c63afed02"},
		{"isolation-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "isolation", `scheduler = "kueue"`, `scheduler = "none"`)
		}, "e4faebcfab8a582f5e7db3c5dd56788553c364fc6718293e4f8c8445a29ba49e"},
		{"shared-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "shared", `scheduler   = "kueue"`, `scheduler   = "none"`)
		}, "899acb5be309010e9f212ab4fc405060780837b2b3e26e2c6a305070fe730659"},
		{"size-M-changed", func(t *testing.T) *config.Config { return enginetest.SizeM(t, 10) }, "b1035e9168cdcbe671837ca8202b94d0aa66a6b58d72aca42eb747fd454ba4c0"},
		{"isolation", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "isolation") }, "367b2318f31862cb179e17ea108dafe72f9dafec4317cb08f7ce8721a30788fd"},
		{"shared", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "shared") }, "f0593162a9cbe2ab7b10d92e89e7abe14a785e001cbaec020e4e73c62e4306ab"},
		{"size-M", func(t *testing.T) *config.Config { return enginetest.SizeM(t, 0) }, "f54e9288fb32670f8c22bb40d735e4f698695ac81ac792510f2586c9f72c48a6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := compile.Compile(tt.load(t))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range d.Objects {
				if k := engine.KeyOf(o.Object); o.Key() != k {
					t.Errorf("%s: Key() = %v, the object's key is %v", o.Address, o.Key(), k)
				}
			}
			if got := digestDesired(d); got != tt.want {
				t.Errorf("compiled output digest %s, want %s", got, tt.want)
			}
		})
	}
}

// digestDesired is a digest of everything in d: each object's fields, the
// type and value of every value in it, and which maps are one copy (a map
// met again is written as a reference to where it was first met).
func digestDesired(d *engine.Desired) string {
	h := sha256.New()
	w := &dumper{h: h, ids: map[uintptr]int{}}
	fmt.Fprintf(h, "stack %q kinds %#v sources %#v registry %v\n", d.Stack, d.Kinds, d.Sources, d.Registry != nil)
	for _, p := range d.Pools {
		fmt.Fprintf(h, "pool %#v\n", *p)
	}
	for _, o := range d.Objects {
		fmt.Fprintf(h, "object %q %#v %v key %#v\n", o.Address, o.DependsOn, o.Sensitive, o.Key())
		w.value(o.Object.Object)
		fmt.Fprintln(h)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// dumper writes values to h, numbering the maps it meets.
type dumper struct {
	h   hash.Hash
	ids map[uintptr]int
}

// value writes v, its maps' keys in order.
func (w *dumper) value(v any) {
	switch v := v.(type) {
	case map[string]any:
		p := reflect.ValueOf(v).Pointer()
		if id, ok := w.ids[p]; ok {
			fmt.Fprintf(w.h, "@%d", id)
			return
		}
		w.ids[p] = len(w.ids)
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fmt.Fprintf(w.h, "{#%d", w.ids[p])
		for _, k := range keys {
			fmt.Fprintf(w.h, "%q:", k)
			w.value(v[k])
			fmt.Fprint(w.h, ",")
		}
		fmt.Fprint(w.h, "}")
	case []any:
		fmt.Fprint(w.h, "[")
		for _, e := range v {
			w.value(e)
			fmt.Fprint(w.h, ",")
		}
		fmt.Fprint(w.h, "]")
	default:
		fmt.Fprintf(w.h, "%T(%#v)", v, v)
	}
}
