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
// resource and count, its content digests unchanged): a change that makes compile cheaper must not change what
// it compiles, nor which maps are one copy; the key each object keeps
// (engine.Object.CacheKey) is its key. A digest changes only with a
// change of compile's output meant by the commit that changes it.
func TestCompileUnchanged(t *testing.T) {
	tests := []struct {
		name string
		load func(t *testing.T) *config.Config
		want string
	}{
		{"bank-kueue", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "bank") }, "f7a3f2f4bbb7e6aee62b5deb51c8d62b947c5b2201e49b93890c6f461faf3142"},
		{"bank-volcano", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", enginetest.BankUnder("volcano")...)
		}, "0fa94d0082a94ab27078b8f3416b076ba08bb27bc2762ba7360d94cdd12593f2"},
		{"bank-agent", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", append(enginetest.BankUnder("none"), `scheduler = "none"`, `mig_backend = "agent"`)...)
		}, "43966b2b9857dad112df2a88f5fabe130068655c20a16805f1328a336b2162f8"},
		{"bank-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", enginetest.BankUnder("none")...)
		}, "c052adb03c019a1dc3125d143dbcb8dccf496a32777645501d79a0d4da82323c"},
		{"quickstart", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "quickstart") }, "e71289224e840f721c8daec8638793aa5e5bf7b5bd5af7a8a1fdd3cd03177ee9"},
		{"isolation-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "isolation", `scheduler = "kueue"`, `scheduler = "none"`)
		}, "800c4c233086c431237ae585b50decf9dcf980fd305f80a58e5084b9052cea03"},
		{"shared-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "shared", `scheduler   = "kueue"`, `scheduler   = "none"`)
		}, "ff2fc0b84c2339e0f76a0f2ce9d9e1fd497b6759cbbf6d372c6f4eab3bf3662e"},
		{"size-M-changed", func(t *testing.T) *config.Config { return enginetest.SizeM(t, 10) }, "ec457a8065c17a9fba468ff9d22ff492490e684a0189594ff96292884263ff42"},
		{"isolation", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "isolation") }, "e1c2603f16135600a03a882b280f26d6ef0575da565b734c7336efcc913b15ae"},
		{"shared", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "shared") }, "4f408661cbe107aafc73e71724a8d8e91ea49c683972e80739565e730197f85b"},
		{"size-M", func(t *testing.T) *config.Config { return enginetest.SizeM(t, 0) }, "79b6414374e6602296160e9a0f8c64977fd472f41a7599e04fde668fea68b842"},
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
