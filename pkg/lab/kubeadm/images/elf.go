// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package images

import (
	"debug/elf"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
)

// libDirs are the directories glibc's loader searches for a DT_NEEDED name when the binary has no
// RUNPATH and there is no /etc/ld.so.cache (the image has none): the multiarch directories of
// Debian and Ubuntu first, then the plain ones.
func libDirs(m elf.Machine) []string {
	triplet := map[elf.Machine]string{elf.EM_X86_64: "x86_64-linux-gnu", elf.EM_AARCH64: "aarch64-linux-gnu"}[m]
	var dirs []string
	if triplet != "" {
		dirs = append(dirs, "/lib/"+triplet, "/usr/lib/"+triplet)
	}
	return append(dirs, "/lib64", "/usr/lib64", "/lib", "/usr/lib")
}

// SharedFiles returns the absolute paths of the files the ELF binary bin needs to run in an empty
// root filesystem, each to be copied from this machine to the same path in the image (read
// through symlinks): the interpreter its PT_INTERP names, and every library its DT_NEEDED entries
// name, transitively, where the loader finds it on this machine (skipping candidates of another
// class or machine, as the loader does). A static binary needs nothing. The list is sorted.
func SharedFiles(bin string) ([]string, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, fmt.Errorf("shared libraries of %s: %w", bin, err)
	}
	defer f.Close()
	interp, err := interpreter(f)
	if err != nil {
		return nil, fmt.Errorf("shared libraries of %s: %w", bin, err)
	}
	if interp == "" {
		return nil, nil
	}
	out := []string{interp}
	// loaded holds the names already satisfied: the interpreter's soname and every library's.
	loaded := map[string]bool{path.Base(interp): true}
	if so, err := soname(interp); err == nil && so != "" {
		loaded[so] = true
	}
	queue, err := f.ImportedLibraries()
	if err != nil {
		return nil, fmt.Errorf("shared libraries of %s: %w", bin, err)
	}
	for len(queue) > 0 {
		lib := queue[0]
		queue = queue[1:]
		if loaded[lib] {
			continue
		}
		loaded[lib] = true
		p, needs, err := findLibrary(lib, f.Class, f.Machine)
		if err != nil {
			return nil, fmt.Errorf("shared libraries of %s: %w", bin, err)
		}
		out = append(out, p)
		queue = append(queue, needs...)
	}
	sort.Strings(out)
	return out, nil
}

// interpreter returns the PT_INTERP path of f, or "" when f has none (a static binary).
func interpreter(f *elf.File) (string, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return "", fmt.Errorf("PT_INTERP: %w", err)
		}
		for len(b) > 0 && b[len(b)-1] == 0 {
			b = b[:len(b)-1]
		}
		if !path.IsAbs(string(b)) {
			return "", fmt.Errorf("PT_INTERP %q is not an absolute path", b)
		}
		return string(b), nil
	}
	return "", nil
}

func soname(file string) (string, error) {
	f, err := elf.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	names, err := f.DynString(elf.DT_SONAME)
	if err != nil || len(names) == 0 {
		return "", err
	}
	return names[0], nil
}

// findLibrary returns the first file named lib in the loader's directories that is an ELF object
// of class and machine, and the libraries it needs in turn.
func findLibrary(lib string, class elf.Class, machine elf.Machine) (string, []string, error) {
	dirs := libDirs(machine)
	for _, d := range dirs {
		p := filepath.Join(d, lib)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		needs, err := f.ImportedLibraries()
		ok := f.Class == class && f.Machine == machine
		f.Close()
		if !ok {
			continue
		}
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", p, err)
		}
		return p, needs, nil
	}
	return "", nil, fmt.Errorf("library %s (%s %s) not found in %v", lib, class, machine, dirs)
}
