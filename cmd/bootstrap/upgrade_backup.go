package main

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/gather"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// backupFlags say where `upgrade run` takes each hop's etcd backup.
type backupFlags struct {
	node, key, user, remote, script, none string
}

func (f *backupFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.node, "backup-node", "", "NAME=ADDRESS: the control-plane node that takes each hop's etcd backup (ADDRESS host or host:port)")
	cmd.Flags().StringVar(&f.key, "ssh-key", "", "the private key SSH logs in to the node with (the install key)")
	cmd.Flags().StringVar(&f.user, "ssh-user", "core", "the node's login")
	cmd.Flags().StringVar(&f.remote, "backup-dir", "/home/core/assets/backup", "the directory on the node the backups are written under (one subdirectory per hop)")
	cmd.Flags().StringVar(&f.script, "backup-script", upgrade.DefaultBackupScript, "the cluster's backup script on the node")
	cmd.Flags().StringVar(&f.none, "no-etcd-backup", "", "REASON: run the hops without etcd backups, journaling why")
}

// options returns the backup's options, their directories still to be made per hop (forHop),
// or nil with o.NoBackup set to the reason given.
func (f *backupFlags) options(g *globals, o *upgrade.RunOptions) (*upgrade.BackupOptions, error) {
	if f.node == "" {
		if strings.TrimSpace(f.none) == "" {
			return nil, usageError{upgrade.ErrNoBackup}
		}
		o.NoBackup = f.none
		return nil, nil
	}
	if f.none != "" {
		return nil, usageError{fmt.Errorf("--backup-node and --no-etcd-backup exclude each other")}
	}
	name, addr, ok := strings.Cut(f.node, "=")
	if !ok || name == "" || addr == "" {
		return nil, usageError{fmt.Errorf("--backup-node %q: want NAME=ADDRESS, e.g. master-0=192.168.10.11", f.node)}
	}
	if f.key == "" {
		return nil, usageError{fmt.Errorf("--backup-node needs --ssh-key (the private key of the install's sshKey)")}
	}
	signer, err := gather.LoadSigner(f.key)
	if err != nil {
		return nil, err
	}
	dir, err := g.workDir()
	if err != nil {
		return nil, err
	}
	return &upgrade.BackupOptions{Node: name, Address: addr, Script: f.script, RemoteDir: f.remote,
		Dialer: &gather.Dialer{User: f.user, Signer: signer, Keys: gather.NewHostKeys(stages.KnownHosts(dir))}}, nil
}

// forHop is the hop's backup: its own directory on the node and under the upgrade dir.
func forHop(bo upgrade.BackupOptions, to, upgradeDir string) func(context.Context) (*upgrade.Backup, error) {
	bo.RemoteDir = path.Join(bo.RemoteDir, to)
	bo.Dir = filepath.Join(upgradeDir, "backups", to)
	bo.Reuse = upgrade.DefaultBackupReuse // a resume after a kill between the backup and its record
	return func(ctx context.Context) (*upgrade.Backup, error) { return upgrade.TakeBackup(ctx, bo) }
}
