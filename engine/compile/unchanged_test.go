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
// desired kinds list, and when every stack with tenants got the
// device-classes policy, and when it got Cohort, again only the kinds
// list): a change that makes compile cheaper must not change what
// it compiles, nor which maps are one copy; the key each object keeps
// (engine.Object.CacheKey) is its key. A digest changes only with a
// change of compile's output meant by the commit that changes it.
func TestCompileUnchanged(t *testing.T) {
	tests := []struct {
		name string
		load func(t *testing.T) *config.Config
		want string
	}{
		{"bank-kueue", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "bank") }, "ff6c368423e2ad34cee49e50bec7e3bf248786c5b2a7026255886001e0f45f2a"},
		{"bank-volcano", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", enginetest.BankUnder("volcano")...)
		}, "0c76d43f7904b6acf915f00837e683fd63d88e572df2bec4f27423d98d88bf4f"},
		{"bank-agent", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", append(enginetest.BankUnder("none"), `scheduler = "none"`, `mig_backend = "agent"`)...)
		}, "1fcc0c6e723a71ac4d1f25e1438be03197faf865a62d377e66df2eef42cfe819"},
		{"bank-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", enginetest.BankUnder("none")...)
		}, "f561d46521e35f4c7e3f30ed6c40d8e76cfbc39c64dfdca920536a23f07c9a2f"},
		{"quickstart", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "quickstart") }, "610b668f2f1877d588a8a912f360e1514b779c22cc7a8d31eb9f0597c6bf08de"},
		{"isolation-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "isolation", `scheduler = "kueue"`, `scheduler = "none"`)
		}, "4b342ac4f4ac4e1a732794e9503f155e90215fc1c2964cd537d1a4726253baaa"},
		{"shared-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "shared", `scheduler   = "kueue"`, `scheduler   = "none"`)
		}, "9092033420c96d3ab16b99c9afd77c10cf2fcdc1424ab1353639681ba5f591e2"},
		{"size-M-changed", func(t *testing.T) *config.Config { return enginetest.SizeM(t, 10) }, "d7d895d00fcd0a43168974bb33bbd35e56a6814ff9d964a9875b1e3cc1053513"},
		{"isolation", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "isolation") }, "bda8eee2283d2a14dad6f77ae17634affd338ebe022e1989edebb0ebba073177"},
		{"shared", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "shared") }, "6dd788e314e671f533483d90fc9744862b711888dd89d79054fc9cd607b3b977"},
		{"size-M", func(t *testing.T) *config.Config { return enginetest.SizeM(t, 0) }, "8a2d486652c87a967c26d2a04bf0c4028672586029ccf5730e4e6b7a1a573e55"},
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
