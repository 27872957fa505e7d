package main

import (
	"reflect"
	"testing"
)

// listURLs keeps the LISTs a plan made and drops discovery and later pages.
func TestListURLs(t *testing.T) {
	reqs := []request{
		{method: "GET", url: "https://127.0.0.1:1/api?timeout=1m0s"},
		{method: "GET", url: "https://127.0.0.1:1/apis?timeout=1m0s"},
		{method: "GET", url: "https://127.0.0.1:1/api/v1?timeout=1m0s"},
		{method: "GET", url: "https://127.0.0.1:1/apis/kueue.x-k8s.io/v1beta2?timeout=1m0s"},
		{method: "GET", url: "https://127.0.0.1:1/api/v1/namespaces?labelSelector=gpuform.dev%2Fstack%3Dlarge&timeout=1m0s"},
		{method: "GET", url: "https://127.0.0.1:1/apis/serving.kserve.io/v1beta1/inferenceservices?labelSelector=x&limit=500"},
		{method: "GET", url: "https://127.0.0.1:1/apis/serving.kserve.io/v1beta1/inferenceservices?continue=abc&labelSelector=x&limit=500"},
		{method: "PATCH", url: "https://127.0.0.1:1/api/v1/namespaces/a"},
	}
	want := []string{
		"https://127.0.0.1:1/api/v1/namespaces?labelSelector=gpuform.dev%2Fstack%3Dlarge&timeout=1m0s",
		"https://127.0.0.1:1/apis/serving.kserve.io/v1beta1/inferenceservices?labelSelector=x&limit=500",
	}
	if got := listURLs(reqs); !reflect.DeepEqual(got, want) {
		t.Errorf("listURLs = %q, want %q", got, want)
	}
}
