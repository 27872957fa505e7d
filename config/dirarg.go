package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ArgDir is the configuration directory that a command's path arguments
// name (validate DIR, validate FILE.hcl ...), given --chdir (empty: the
// working directory), against which relative arguments are taken. No
// argument is chdir. gpuform reads every *.hcl file of one directory, as
// Terraform reads a module: a directory names itself, and .hcl files name
// the directory that holds them (all of them must be in the same one),
// whose every *.hcl file is read. Anything else is an error that says
// what to pass instead.
func ArgDir(chdir string, args []string) (string, error) {
	dir := ""
	for _, arg := range args {
		p := arg
		if chdir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(chdir, p)
		}
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("%s does not exist: pass the configuration's directory (gpuform reads every *.hcl file of it)", p)
		case err != nil:
			return "", err
		case !fi.IsDir() && !strings.HasSuffix(p, ".hcl"):
			return "", fmt.Errorf("%s is not a .hcl file or a directory: gpuform reads every *.hcl file of a directory; pass the directory (or --chdir DIR)", p)
		case !fi.IsDir():
			p = filepath.Dir(p)
		}
		p = filepath.Clean(p)
		if dir != "" && dir != p {
			return "", fmt.Errorf("%s and %s are different directories: gpuform reads every *.hcl file of one directory, a configuration; run the command once for each directory", dir, p)
		}
		dir = p
	}
	if dir == "" {
		return chdir, nil
	}
	return dir, nil
}

// IsConfigArg reports whether a command's argument names a configuration
// (a directory, or a .hcl file) rather than another file (apply's saved
// plan), taken relative to chdir.
func IsConfigArg(chdir, arg string) bool {
	if strings.HasSuffix(arg, ".hcl") {
		return true
	}
	if chdir != "" && !filepath.IsAbs(arg) {
		arg = filepath.Join(chdir, arg)
	}
	fi, err := os.Stat(arg)
	return err == nil && fi.IsDir()
}
