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
		{"bank-kueue", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "bank") }, "0798f4b7c538aebd82500b21b7cfb7e9eaef40e855a7ce1d16d7208d0f6c25b9"},
		{"bank-volcano", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", enginetest.BankUnder("volcano")...)
		}, "4284a74aec6ccc58924ddc847aa94ba50e04d0da78162bb710ece927305690bb"},
		{"bank-agent", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", append(enginetest.BankUnder("none"), `scheduler = "none"`, `mig_backend = "agent"`)...)
		}, "c07c80f2a44cd087ce5aa52ad470c50582e203bf593919dc541281d7cd8dd0f7"},
		{"bank-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", enginetest.BankUnder("none")...)
		}, "beae4fd42be7f3e5fd093c045f4d1a34cf537c4f5133aa01a488cde055dbf0a9"},
		{"quickstart", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "quickstart") }, "2203caa129be0f95ca0de0326b11bdbc78582b9fdd81a2b5567fb6aa03138718"},
		{"isolation-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "isolation", `scheduler = "kueue"`, `scheduler = "none"`)
		}, "58693c002ea8ad864752cda2eda8803fb9d7118d7f5848d8d8e1f452245d2ef6"},
		{"shared-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "shared", `scheduler   = "kueue"`, `scheduler   = "none"`)
		}, "af0b6e8f0d2fb497a49a7a777d461d668a8b665abb5f9ff5afbd69b169ed677c"},
		{"size-M-changed", func(t *testing.T) *config.Config { return enginetest.SizeM(t, 10) }, "5e543653621a3ce6f94225a7559a6a8e6a4ee0d0f8f5bef8fe04c1b4fee8004c"},
		{"isolation", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "isolation") }, "c82e63491b88a5ca3a4f742dad8200198d4517d99e590f1c4028fa80e486be87"},
		{"shared", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "shared") }, "d0a0a94e41ba81bf82378419aca7e4c8692196ee2fc9eaf32343d267c35064fa"},
		{"size-M", func(t *testing.T) *config.Config { return enginetest.SizeM(t, 0) }, "38940c02cb46631906759eacbd738437ab479623b10b027af22f3e3ad84d3e79"},
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
