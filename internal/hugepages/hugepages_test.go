package hugepages

import (
	"testing"
	"testing/fstest"
)

func modeFS(content string) fstest.MapFS {
	return fstest.MapFS{modeFile: {Data: []byte(content)}}
}

func TestMode(t *testing.T) {
	tests := []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"madvise", modeFS("always [madvise] never\n"), "madvise"},
		{"always", modeFS("[always] madvise never\n"), "always"},
		{"never", modeFS("always madvise [never]\n"), "never"},
		{"no brackets", modeFS("always madvise never\n"), ""},
		{"brackets reversed", modeFS("] madvise [\n"), ""},
		{"too long to be the kernel's", modeFS("[madvise]" + string(make([]byte, 300))), ""},
		{"no file (not Linux, or no THP)", fstest.MapFS{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Mode(tt.fsys); got != tt.want {
				t.Errorf("Mode = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWanted(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == Env {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name string
		mode string
		env  string
		want bool
	}{
		{"madvise: asks", "always [madvise] never", "", true},
		{"madvise, turned off", "always [madvise] never", "off", false},
		{"madvise, another value asks", "always [madvise] never", "on", true},
		{"always: the kernel already does", "[always] madvise never", "", false},
		{"never: the kernel will not", "always madvise [never]", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Wanted(modeFS(tt.mode), env(tt.env)); got != tt.want {
				t.Errorf("Wanted = %v, want %v", got, tt.want)
			}
		})
	}
}
