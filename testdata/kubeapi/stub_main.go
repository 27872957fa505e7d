package main

import (
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/klog/v2"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
)

func main() {}
