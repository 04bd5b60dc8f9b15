package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/profiles"
)

// newInitCmd builds `bootstrap init --profile NAME`: it writes one of the embedded, commented
// example profiles to -f (default site.yaml), refusing to overwrite without --force, and lists
// the files the profile names so the engineer knows what to put beside it.
func newInitCmd() *cobra.Command {
	var profile string
	var force, list bool
	cmd := &cobra.Command{
		Use:   "init --profile NAME [-f FILE]",
		Short: "Write a commented site profile from an example (" + strings.Join(profiles.Names(), ", ") + ")",
		Example: `  bootstrap init --list
  bootstrap init --profile dell-xe7740-h200 -f site.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if jsonOut(cmd) != nil {
				out = io.Discard // -o json: the result line says it all
			}
			if list {
				setResult(cmd, map[string]any{"profiles": profiles.Names()})
				for _, n := range profiles.Names() {
					fmt.Fprintln(out, n)
				}
				return nil
			}
			if profile == "" {
				return fmt.Errorf("init: --profile is required; one of: %s", strings.Join(profiles.Names(), ", "))
			}
			data, err := profiles.Get(profile)
			if err != nil {
				return fmt.Errorf("init: %w", err)
			}
			file := profilePath(cmd, args)
			if err := writeProfile(file, data, force); err != nil {
				return fmt.Errorf("init: %w", err)
			}
			fmt.Fprintf(out, "wrote %s from profile %s\n", file, profile)
			return listNamedFiles(cmd, out, file, profile)
		},
	}
	cmd.Flags().StringVarP(&profile, "profile", "p", "", "the example to start from (see --list)")
	cmd.Flags().StringP("file", "f", "site.yaml", "where to write the profile")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing file")
	cmd.Flags().BoolVar(&list, "list", false, "list the example profiles")
	return cmd
}

// writeProfile writes data to file. Without force an existing file is never touched (O_EXCL);
// with force the new content replaces it atomically (temp file, then rename).
func writeProfile(file string, data []byte, force bool) error {
	if !force {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; nothing was written (use --force to overwrite it, or -f to pick another file)", file)
		}
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".site-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// listNamedFiles prints the local files the new profile names and whether each exists yet.
func listNamedFiles(cmd *cobra.Command, out io.Writer, file, profile string) error {
	s, err := site.Load(file)
	if err != nil {
		return err // an embedded profile that does not load is a bug the profiles test catches
	}
	dir := filepath.Dir(s.File)
	type named struct {
		State string `json:"state"`
		Kind  string `json:"kind"`
		Path  string `json:"path"`
		Field string `json:"field"`
	}
	var files []named
	paths := s.LocalPaths()
	if key := s.SSHPrivateKeyFile(); key != "" {
		paths = append(paths, site.LocalPath{Field: "cluster.sshKeyFile (private key)", Path: key, Kind: "secret"})
	}
	if len(paths) > 0 {
		fmt.Fprintln(out, "it names these local files (secrets must be mode 0600):")
	}
	for _, p := range paths {
		rel, err := filepath.Rel(dir, p.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = p.Path
		}
		state := "missing"
		if _, err := os.Stat(p.Path); err == nil {
			state = "present"
		}
		fmt.Fprintf(out, "  %-8s %-7s %-40s %s\n", state, p.Kind, rel, p.Field)
		files = append(files, named{state, p.Kind, rel, p.Field})
	}
	setResult(cmd, map[string]any{"file": file, "profile": profile, "files": files})
	fmt.Fprintf(out, "next: edit %s, create the missing files, then run: bootstrap validate -f %s\n", file, file)
	return nil
}
