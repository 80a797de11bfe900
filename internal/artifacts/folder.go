package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kconform/kconform/verify"
)

// RunFolder is what one scenario run's folder holds, read once for every
// reader (the result table, the records).
type RunFolder struct {
	// Path is the folder; Rel is it relative to the root it was found
	// under, with slashes.
	Path, Rel string
	// KafkaMode, Client and Name are the folder's three last path parts:
	// <kafka>-<mode>/<client>/<scenario folder>.
	KafkaMode, Client, Name string
	// Cell is the run's identity: its run.json's, or its cell.json's
	// (CellFile) for a run that did not apply or could not finish.
	Cell Cell
	// Run is run.json, nil when the run stopped before writing it.
	Run *Run
	// Verdict is verdict.json, nil for a run that was not judged.
	Verdict *verify.Verdict
	// NotApplicable says why the scenario did not apply; Error why the run
	// could not finish; either is "" otherwise.
	NotApplicable, Error string
	// Written is when the outcome file was written (what names a run that
	// has no run.json).
	Written time.Time
}

// IsRunFolder tells whether dir holds a run's outcome.
func IsRunFolder(dir string) bool {
	for _, f := range []string{VerdictFile, NotApplicableFile, ErrorFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// ReadRunFolder reads the run folder dir found under root; ok is false
// for a folder that holds no run's outcome.
func ReadRunFolder(root, dir string) (f RunFolder, ok bool, err error) {
	if !IsRunFolder(dir) {
		return f, false, nil
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return f, false, err
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) < 3 {
		return f, false, fmt.Errorf("%s: a run folder must be <kafka>-<mode>/<client>/<scenario>", dir)
	}
	f = RunFolder{Path: dir, Rel: filepath.ToSlash(rel), KafkaMode: parts[len(parts)-3], Client: parts[len(parts)-2], Name: parts[len(parts)-1]}
	text := func(name string) (string, time.Time, bool) {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			return "", time.Time{}, false
		}
		st, _ := os.Stat(p)
		return strings.TrimSpace(string(b)), st.ModTime().UTC(), true
	}
	var had bool
	if f.NotApplicable, f.Written, had = text(NotApplicableFile); !had {
		f.Error, f.Written, _ = text(ErrorFile)
	}
	switch run, err := ReadRun(dir); {
	case err == nil:
		f.Run, f.Cell = &run, run.Cell
	case !errors.Is(err, fs.ErrNotExist):
		return f, false, err
	case f.NotApplicable == "" && f.Error == "":
		return f, false, fmt.Errorf("%s: a judged run without %s: %w", dir, RunFile, err)
	default:
		// The folder's path is never read back into a cell: a run
		// without run.json recorded its cell on its own.
		if err := ReadJSON(filepath.Join(dir, CellFile), &f.Cell); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("%s: a run that did not apply or finish, recorded without its %s by an older kconform: run it again or remove the folder", dir, CellFile)
			}
			return f, false, err
		}
	}
	if f.NotApplicable == "" && f.Error == "" {
		var v verify.Verdict
		if err := ReadJSON(filepath.Join(dir, VerdictFile), &v); err != nil {
			return f, false, err
		}
		f.Verdict = &v
	}
	return f, true, nil
}

// WalkRunFolders reads every run folder under root, at any depth, in
// lexical order.
func WalkRunFolders(root string) ([]RunFolder, error) {
	var out []RunFolder
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		f, ok, err := ReadRunFolder(root, path)
		if err != nil || !ok {
			return err
		}
		out = append(out, f)
		return fs.SkipDir
	})
	return out, err
}
