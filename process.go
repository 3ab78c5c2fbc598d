package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"

	"shardis/config"
)

// daemonChildEnv marks the detached copy of the process that daemonize starts.
const daemonChildEnv = "SHARDIS_DAEMONIZED"

// defaultPidFile is where a daemonized server writes its pid when pidfile is not set (Redis
// uses /var/run/redis.pid).
const defaultPidFile = "/var/run/shardis.pid"

// detach reports whether this process should detach and leave the serving to a child:
// daemonize yes, not supervised (as in Redis), and not already the child.
func detach(cfg *config.Config) bool {
	return cfg.Daemonize() && cfg.SupervisedMode() == "no" && os.Getenv(daemonChildEnv) == ""
}

// daemonize starts a detached copy of this process (same arguments, new session, standard
// streams on /dev/null) and returns, so that the caller exits as Redis's parent does after
// fork: a Go process cannot fork its running runtime. Errors the child meets later (a port in
// use, say) go to its logfile, as with Redis.
func daemonize() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Env = append(os.Environ(), daemonChildEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("daemonize: %w", err)
	}
	return cmd.Process.Release()
}

// daemonized reports whether this process is the detached child.
func daemonized() bool { return os.Getenv(daemonChildEnv) != "" }

// openLog opens logfile for appending, as Redis does at start-up: a file that cannot be opened
// stops the start. A daemonized server without a logfile logs to /dev/null. nil means the
// standard error.
func openLog(cfg *config.Config) (*os.File, error) {
	path := cfg.LogFile()
	if path == "" {
		if !daemonized() {
			return nil, nil
		}
		path = os.DevNull
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("Can't open the log file: %v", err)
	}
	return f, nil
}

// pidFilePath is where to write the pid: pidfile, or defaultPidFile for a daemonized server.
func pidFilePath(cfg *config.Config) string {
	if p := cfg.PidFile(); p != "" {
		return p
	}
	if daemonized() {
		return defaultPidFile
	}
	return ""
}

// notifySupervisor tells the supervisor of mode (Config.SupervisedMode) the server is ready,
// as Redis does: systemd through $NOTIFY_SOCKET, upstart by stopping itself (SIGSTOP), which
// upstart's "expect stop" waits for.
func notifySupervisor(mode string) error {
	switch mode {
	case "systemd":
		addr := os.Getenv("NOTIFY_SOCKET")
		if addr == "" {
			return errors.New("systemd supervision requested or auto-detected, but appropriate environment not found")
		}
		c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
		if err != nil {
			return fmt.Errorf("cannot reach systemd at %s: %w", addr, err)
		}
		defer c.Close()
		_, err = c.Write([]byte("STATUS=Ready to accept connections\nREADY=1\n"))
		return err
	case "upstart":
		if os.Getenv("UPSTART_JOB") == "" {
			return errors.New("upstart supervision requested, but UPSTART_JOB not found")
		}
		_ = os.Unsetenv("UPSTART_JOB")
		return syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	}
	return nil
}
