package hugepages

import (
	"testing"
	"testing/fstest"
)

// modeFS is a root file system whose kernel reads mode and has 2 MiB huge
// pages.
func modeFS(mode string) fstest.MapFS {
	return fstest.MapFS{modeFile: {Data: []byte(mode)}, sizeFile: {Data: []byte("2097152\n")}}
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
		size string // hpage_pmd_size; "" for none
		env  string
		want bool
	}{
		{"madvise: asks", "always [madvise] never", "2097152\n", "", true},
		{"madvise, turned off", "always [madvise] never", "2097152\n", "off", false},
		{"madvise, another value asks", "always [madvise] never", "2097152\n", "on", true},
		{"madvise, 512 MiB huge pages (64 KiB base pages)", "always [madvise] never", "536870912\n", "", false},
		{"madvise, huge page size unknown", "always [madvise] never", "", "", false},
		{"always: the kernel already does", "[always] madvise never", "2097152\n", "", false},
		{"never: the kernel will not", "always madvise [never]", "2097152\n", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{modeFile: {Data: []byte(tt.mode)}}
			if tt.size != "" {
				fsys[sizeFile] = &fstest.MapFile{Data: []byte(tt.size)}
			}
			if got := Wanted(fsys, env(tt.env)); got != tt.want {
				t.Errorf("Wanted = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestForCommand(t *testing.T) {
	tests := map[string]bool{
		"plan": true, "drift": true, "validate": true, "preview": true, "gpuform": true,
		"agent": false, "apply": false,
	}
	for name, want := range tests {
		if got := ForCommand(name); got != want {
			t.Errorf("ForCommand(%q) = %v, want %v", name, got, want)
		}
	}
}
