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
// device-classes policy, and when the registry got ResourceClaimTemplate
// and Cohort, and MultiKueue's three kinds, again only the kinds list): a change that makes compile cheaper must not change what
// it compiles, nor which maps are one copy; the key each object keeps
// (engine.Object.CacheKey) is its key. A digest changes only with a
// change of compile's output meant by the commit that changes it.
func TestCompileUnchanged(t *testing.T) {
	tests := []struct {
		name string
		load func(t *testing.T) *config.Config
		want string
	}{
		{"bank-kueue", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "bank") }, "427f17798551fffe6260694f35253075121d69e3e3b5a6c59e90d63eabe8681b"},
		{"bank-volcano", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", enginetest.BankUnder("volcano")...)
		}, "d0e68f1d1570ccb9fd3ce1981cc8b74a1af175c7fbd2f9ef39ad7fbfd64f25d2"},
		{"bank-agent", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", append(enginetest.BankUnder("none"), `scheduler = "none"`, `mig_backend = "agent"`)...)
		}, "310c207d84e7bb5b450909edf2c297368a6a7954a2bb96422134091ca1b28bb3"},
		{"bank-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "bank", enginetest.BankUnder("none")...)
		}, "47509ab68cf4d979c7943534651cc7694585ee9c4e6b5436175774cf4d3bc31e"},
		{"quickstart", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "quickstart") }, "d5b1e952074cf018b2d7b4a34b25a4c216157b1d980331df819af564056826ad"},
		{"isolation-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "isolation", `scheduler = "kueue"`, `scheduler = "none"`)
		}, "8ccac5263db4c72cf5662584c5042ec29aedb103dfd59657343e97237c26a4a6"},
		{"shared-none", func(t *testing.T) *config.Config {
			return enginetest.LoadExample(t, "shared", `scheduler   = "kueue"`, `scheduler   = "none"`)
		}, "7d7ace2e5cfa7f78a6f7fd3570a73e42d9f530d392bafe6b27608245ac5c9299"},
		{"size-M-changed", func(t *testing.T) *config.Config { return enginetest.SizeM(t, 10) }, "398fe5f3aa3948b107e6625e579a99772cf28c7a80756e7022100a2c01b2721c"},
		{"isolation", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "isolation") }, "52ad2011bdb0d9a110f184aecefe96874b4ee33754a24d796dcf02dc445bf4f3"},
		{"shared", func(t *testing.T) *config.Config { return enginetest.LoadExample(t, "shared") }, "a5fa08d930ec44684fe1a53d494b58bcc0da2d375c6dbe9c0fa3084633fe0f37"},
		{"size-M", func(t *testing.T) *config.Config { return enginetest.SizeM(t, 0) }, "34b8a067d264e3df10f9e046eb92bd173a62277db6425f5a175e1b64c98e6155"},
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
