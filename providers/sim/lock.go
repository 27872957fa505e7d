package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/gpuform/gpuform/engine"
)

// lockState is the content of the lock file beside the state file.
type lockState struct {
	ID     string    `json:"id"`
	Holder string    `json:"holder"`
	PID    int       `json:"pid"`
	Since  time.Time `json:"since"`
}

func (c *Cluster) lockPath() string { return c.statePath + ".lock" }

// Lock takes the simulated cluster's lock for stack: a lock file created
// exclusively. A lock whose process is gone is taken over.
func (c *Cluster) Lock(ctx context.Context, stack, holder string, wait time.Duration) (release func(context.Context) error, id string, err error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	l := lockState{ID: hex.EncodeToString(b), Holder: holder, PID: os.Getpid(), Since: time.Now().UTC()}
	content, _ := json.Marshal(l)
	deadline := time.Now().Add(wait)
	for {
		f, err := os.OpenFile(c.lockPath(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			_, werr := f.Write(content)
			cerr := f.Close()
			if werr != nil || cerr != nil {
				return nil, "", fmt.Errorf("write lock %s: %w", c.lockPath(), errors.Join(werr, cerr))
			}
			return func(context.Context) error { return c.unlock(l.ID) }, l.ID, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, "", fmt.Errorf("take lock %s: %w", c.lockPath(), err)
		}
		cur, rerr := c.readLock()
		if rerr == nil && !alive(cur.PID) {
			_ = os.Remove(c.lockPath()) // its process is gone
			continue
		}
		if time.Now().After(deadline) {
			if rerr != nil {
				return nil, "", fmt.Errorf("the lock file %s is unreadable: %w; remove it if no gpuform runs", c.lockPath(), rerr)
			}
			return nil, "", &engine.LockHeldError{Stack: stack, ID: cur.ID, Holder: cur.Holder, Since: cur.Since}
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *Cluster) readLock() (*lockState, error) {
	b, err := os.ReadFile(c.lockPath())
	if err != nil {
		return nil, err
	}
	var l lockState
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

func (c *Cluster) unlock(id string) error {
	cur, err := c.readLock()
	if err != nil || cur.ID != id {
		return nil
	}
	return os.Remove(c.lockPath())
}

// ForceUnlock removes the lock if its ID is id.
func (c *Cluster) ForceUnlock(_ context.Context, stack, id string) error {
	cur, err := c.readLock()
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stack %s is not locked", stack)
	}
	if err != nil {
		return err
	}
	if cur.ID != id {
		return fmt.Errorf("the lock of stack %s has ID %s, not %s; nothing was unlocked", stack, cur.ID, id)
	}
	return os.Remove(c.lockPath())
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}
