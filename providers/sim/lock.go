package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/files"
)

// lockState is the content of the lock file beside the state file.
type lockState struct {
	ID     string    `json:"id"`
	Holder string    `json:"holder"`
	PID    int       `json:"pid"`
	Since  time.Time `json:"since"`
}

// lockName is the lock file inside the cluster's directory; lockPath is
// its path, for messages.
func (c *Cluster) lockName() string { return c.stateName + ".lock" }
func (c *Cluster) lockPath() string { return filepath.Join(c.dir, c.lockName()) }

// inDir runs f on the cluster's directory as an os.Root: the lock file is
// created, read and removed there, never through a link leading out.
func (c *Cluster) inDir(f func(*os.Root) error) error {
	root, err := os.OpenRoot(c.dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return f(root)
}

// Lock takes the simulated cluster's lock for stack: a lock file created
// exclusively. A lock whose process is gone is taken over.
func (c *Cluster) Lock(ctx context.Context, stack, holder string, wait time.Duration) (release func(context.Context) error, id string, err error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	l := lockState{ID: hex.EncodeToString(b), Holder: holder, PID: os.Getpid(), Since: time.Now().UTC()}
	content, _ := json.Marshal(l)
	deadline := time.Now().Add(wait)
	for {
		err := c.createLock(content)
		if err == nil {
			return func(context.Context) error { return c.unlock(l.ID) }, l.ID, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, "", fmt.Errorf("take lock %s: %w", c.lockPath(), err)
		}
		cur, rerr := c.readLock()
		if rerr == nil && !alive(cur.PID) {
			_ = c.removeLock() // its process is gone
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

// createLock creates the lock file exclusively (O_EXCL: an existing file
// or link is os.ErrExist, never followed) with content.
func (c *Cluster) createLock(content []byte) error {
	return c.inDir(func(root *os.Root) error {
		f, err := root.OpenFile(c.lockName(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, werr := f.Write(content)
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("write lock %s: %w", c.lockPath(), err)
		}
		return nil
	})
}

// removeLock removes the lock file (a link is removed, not followed).
func (c *Cluster) removeLock() error {
	return c.inDir(func(root *os.Root) error { return root.Remove(c.lockName()) })
}

func (c *Cluster) readLock() (*lockState, error) {
	b, err := files.ReadIn(c.dir, c.lockName(), maxLockSize)
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
	return c.removeLock()
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
	return c.removeLock()
}
