//go:build linux && cgo

package nvml

import (
	"errors"
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
)

// ErrUnavailable is matched, with errors.Is, by the error every entry point
// returns when NVML cannot be initialised on this machine.
var ErrUnavailable = errors.New("NVML is not available on this machine")

// UnavailableError says why NVML could not be initialised. After it no NVML
// call is made.
type UnavailableError struct {
	// Return is the code nvml.Init returned; nvml.SUCCESS when the failure
	// was not a return code (a panic, no library handle).
	Return nvml.Return `json:"return"`
	// Reason is a short human explanation, e.g. "the NVIDIA driver is not
	// loaded (ERROR_DRIVER_NOT_LOADED)".
	Reason string `json:"reason"`
}

// Error returns the full message, with what to do instead.
func (e *UnavailableError) Error() string {
	return ErrUnavailable.Error() + ": " + e.Reason +
		"; run gpuform inventory on a GPU node, or use the cluster's published inventory"
}

// Is reports whether target is ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Session is an initialised NVML library. Open makes one; Close shuts NVML
// down. Its methods may be called from several goroutines; they run one at
// a time.
type Session struct {
	mu     sync.Mutex
	lib    nvml.Interface
	closed bool
}

// Open initialises lib (nvml.Init). When Init fails or panics it returns an
// *UnavailableError (errors.Is(err, ErrUnavailable)) and no other NVML call
// is made, not even Shutdown.
func Open(lib nvml.Interface) (s *Session, err error) {
	if lib == nil {
		return nil, &UnavailableError{Reason: "no NVML library was given"}
	}
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, &UnavailableError{Reason: fmt.Sprintf("initialising NVML failed: %v", r)}
		}
	}()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, &UnavailableError{Return: ret, Reason: initFailure(ret)}
	}
	return &Session{lib: lib}, nil
}

// Close shuts NVML down (nvml.Shutdown). Closing twice is a no-op.
func (s *Session) Close() (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	defer recoverInto(&err)
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("NVML shutdown: %s", retName(ret))
	}
	return nil
}

// Read returns the inventory of this session's GPUs; see the package-level
// Read.
func (s *Session) Read(cat *mig.Catalog) (inv *agentv1.Inventory, err error) {
	err = s.do(func() error {
		var e error
		inv, e = read(s.lib, catalog(cat))
		return e
	})
	return inv, err
}

// Apply applies layout to this session's GPUs; see the package-level
// Apply.
func (s *Session) Apply(cat *mig.Catalog, layout agentv1.Layout, opts ApplyOptions) (res *ApplyResult, err error) {
	err = s.do(func() error {
		var e error
		res, e = apply(s.lib, catalog(cat), layout, opts)
		return e
	})
	return res, err
}

// do runs f with the session locked and open, turning a panic into an error.
func (s *Session) do(f func() error) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("NVML session is closed")
	}
	defer recoverInto(&err)
	return f()
}

// Read initialises lib, reads the inventory of every GPU and shuts NVML down.
// cat resolves GPU names to catalog keys and MIG profiles (nil: mig.Default()).
func Read(lib nvml.Interface, cat *mig.Catalog) (*agentv1.Inventory, error) {
	s, err := Open(lib)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Read(cat)
}

// Apply initialises lib, applies layout and shuts NVML down. See
// ApplyResult for what it reports and ApplyOptions for when it refuses.
func Apply(lib nvml.Interface, cat *mig.Catalog, layout agentv1.Layout, opts ApplyOptions) (*ApplyResult, error) {
	s, err := Open(lib)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Apply(cat, layout, opts)
}

// Local returns this machine's NVML library (libnvidia-ml.so.1, loaded by
// Open through nvml.Init), for `gpuform inventory --local` and the agent.
// A panic while setting the library up is returned as an *UnavailableError.
func Local() (lib nvml.Interface, err error) {
	defer func() {
		if r := recover(); r != nil {
			lib, err = nil, &UnavailableError{Reason: fmt.Sprintf("loading libnvidia-ml.so.1 failed: %v", r)}
		}
	}()
	lib = nvml.New()
	if lib == nil {
		return nil, &UnavailableError{Reason: "go-nvml returned no library"}
	}
	return lib, nil
}

// recoverInto turns a panic into *err. Simulated servers panic on functions
// they do not implement; the real library should not panic at all.
func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("NVML call failed unexpectedly: %v", r)
	}
}

// initFailure explains an nvml.Init failure without calling into NVML.
func initFailure(ret nvml.Return) string {
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "libnvidia-ml.so.1 was not found (ERROR_LIBRARY_NOT_FOUND)"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "the NVIDIA driver is not loaded (ERROR_DRIVER_NOT_LOADED)"
	case nvml.ERROR_NO_PERMISSION:
		return "permission denied (ERROR_NO_PERMISSION)"
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return "the NVML library and the kernel driver are different versions (ERROR_LIB_RM_VERSION_MISMATCH)"
	case nvml.ERROR_GPU_IS_LOST:
		return "a GPU has fallen off the bus (ERROR_GPU_IS_LOST)"
	}
	return "nvml.Init returned " + retName(ret)
}

// retName names an NVML return code without calling into NVML (Return.Error
// calls nvmlErrorString once the real library is loaded).
func retName(ret nvml.Return) string {
	switch ret {
	case nvml.SUCCESS:
		return "SUCCESS"
	case nvml.ERROR_UNINITIALIZED:
		return "ERROR_UNINITIALIZED"
	case nvml.ERROR_INVALID_ARGUMENT:
		return "ERROR_INVALID_ARGUMENT"
	case nvml.ERROR_NOT_SUPPORTED:
		return "ERROR_NOT_SUPPORTED"
	case nvml.ERROR_NO_PERMISSION:
		return "ERROR_NO_PERMISSION"
	case nvml.ERROR_ALREADY_INITIALIZED:
		return "ERROR_ALREADY_INITIALIZED"
	case nvml.ERROR_NOT_FOUND:
		return "ERROR_NOT_FOUND"
	case nvml.ERROR_INSUFFICIENT_SIZE:
		return "ERROR_INSUFFICIENT_SIZE"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "ERROR_DRIVER_NOT_LOADED"
	case nvml.ERROR_TIMEOUT:
		return "ERROR_TIMEOUT"
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "ERROR_LIBRARY_NOT_FOUND"
	case nvml.ERROR_FUNCTION_NOT_FOUND:
		return "ERROR_FUNCTION_NOT_FOUND"
	case nvml.ERROR_GPU_IS_LOST:
		return "ERROR_GPU_IS_LOST"
	case nvml.ERROR_RESET_REQUIRED:
		return "ERROR_RESET_REQUIRED"
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return "ERROR_LIB_RM_VERSION_MISMATCH"
	case nvml.ERROR_IN_USE:
		return "ERROR_IN_USE"
	case nvml.ERROR_INSUFFICIENT_RESOURCES:
		return "ERROR_INSUFFICIENT_RESOURCES"
	case nvml.ERROR_UNKNOWN:
		return "ERROR_UNKNOWN"
	}
	return fmt.Sprintf("NVML error %d", int32(ret))
}

// catalog returns cat, or the built-in catalog when cat is nil.
func catalog(cat *mig.Catalog) *mig.Catalog {
	if cat == nil {
		return mig.Default()
	}
	return cat
}
