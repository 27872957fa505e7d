package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// etcdPortsFile remembers the client and peer ports etcd used last time, so a
// restart on the same data directory keeps the member's URLs when it can.
const etcdPortsFile = "etcd-ports"

// etcdPorts picks etcd's client and peer ports on 127.0.0.1: the ones used
// last time on this dir (<dir>/etcd-ports) when they are still free, else
// free ones, and records them.
func etcdPorts(dir string) (client, peer int, err error) {
	client, peer = previousEtcdPorts(dir)
	if !portFree(client) {
		client = 0
	}
	if !portFree(peer) || peer == client {
		peer = 0
	}
	if client == 0 {
		if client, err = freePort(); err != nil {
			return 0, 0, err
		}
	}
	for peer == 0 || peer == client {
		if peer, err = freePort(); err != nil {
			return 0, 0, err
		}
	}
	err = os.WriteFile(filepath.Join(dir, etcdPortsFile), fmt.Appendf(nil, "%d %d\n", client, peer), 0o644)
	return client, peer, err
}

// etcdURL is the client URL of an etcd listening on clientPort.
func etcdURL(clientPort int) string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))
}

// startEtcd starts a single-member etcd on 127.0.0.1 with its data in
// <dir>/etcd, fsync disabled (test data only) and its log in logPath. It
// returns once etcd serves clients.
func startEtcd(dir string, clientPort, peerPort int, logPath string) (*embed.Etcd, error) {
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))}
	peerURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort))}

	cfg := embed.NewConfig()
	cfg.Name = "kubeapi"
	cfg.Dir = filepath.Join(dir, "etcd")
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true
	cfg.Logger = "zap"
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{logPath}
	// Keep the data directory small over a long test run.
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "5m"

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcd: %w", err)
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		e.Close()
		return nil, fmt.Errorf("etcd not ready after 60s")
	}
	return e, nil
}

// previousEtcdPorts reads <dir>/etcd-ports; zeros mean "pick a free port".
func previousEtcdPorts(dir string) (client, peer int) {
	b, err := os.ReadFile(filepath.Join(dir, etcdPortsFile))
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0
	}
	client, _ = strconv.Atoi(f[0])
	peer, _ = strconv.Atoi(f[1])
	return client, peer
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portFree reports whether port (non-zero) can be bound on 127.0.0.1 now.
func portFree(port int) bool {
	if port <= 0 {
		return false
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}
