//go:build linux && cgo

package nvml

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// FromSpec returns the simulated GPUs spec asks for (MODEL:COUNT, as
// gpuform agent --simulate-gpus takes it), their UUIDs derived from node's
// name, or this machine's NVML library when spec is empty.
func FromSpec(spec, node string) (nvml.Interface, error) {
	if spec == "" {
		return Local()
	}
	model, count, ok := strings.Cut(spec, ":")
	n, err := strconv.Atoi(count)
	if !ok || err != nil || n < 1 || n > 16 {
		return nil, fmt.Errorf("--simulate-gpus %q: want MODEL:COUNT with a count from 1 to 16, e.g. A100-80GB:8", spec)
	}
	lib, err := Simulated(mig.Default(), model, n, "", node)
	if err != nil {
		return nil, fmt.Errorf("--simulate-gpus %q: %w", spec, err)
	}
	return lib, nil
}

// StampedLogger is a log function writing one line per call to w, each
// prefixed with the UTC time, safe for concurrent use.
func StampedLogger(w io.Writer) func(string, ...any) {
	var mu sync.Mutex
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		textsafe.Fprintf(w, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
	}
}

// OpenSpec returns the GPUs of FromSpec after checking that NVML opens on
// them (Open, then Close), so that the agent fails first and clearly
// (*UnavailableError) where NVML is missing.
func OpenSpec(spec, node string) (nvml.Interface, error) {
	lib, err := FromSpec(spec, node)
	if err != nil {
		return nil, err
	}
	s, err := Open(lib)
	if err == nil {
		err = s.Close()
	}
	return lib, err
}

// ReadLocal reads this machine's GPUs through NVML (gpuform inventory
// --local).
func ReadLocal(cat *mig.Catalog) (*agentv1.Inventory, error) {
	lib, err := Local()
	if err != nil {
		return nil, err
	}
	return Read(lib, cat)
}
