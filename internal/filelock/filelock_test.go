package filelock

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"
)

// TestLockFileWaits: a second holder waits until the first releases.
func TestLockFileWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(context.Background(), path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path, io.Discard); err == nil {
		t.Fatal("a held lock was taken again")
	}
	released := make(chan struct{})
	go func() { time.Sleep(100 * time.Millisecond); unlock(); close(released) }()
	again, err := Lock(context.Background(), path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	<-released
	again()
}
