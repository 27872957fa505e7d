# The gpuform node agent's image, for those with a container daemon
# (docker build -f build/agent.Dockerfile .): gpuform built WITH cgo, since
# the agent reaches NVML through go-nvml, which loads libnvidia-ml.so at run
# time; the NVIDIA container runtime (runtimeClassName nvidia) mounts the
# library and the GPUs in. The repository's tests do not build it (they
# have no daemon); make image builds the static CLI image without one.
# See docs/install.md.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/gpuform ./cmd/gpuform

# glibc 2.39, newer than the build stage's 2.36, which the binary links.
FROM nvcr.io/nvidia/cuda:12.6.3-base-ubuntu24.04
COPY --from=build /out/gpuform /usr/local/bin/gpuform
# NVML only: no CUDA libraries, no compute.
ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=utility
# Changing MIG modes and instances needs root on the node (docs/agent.md).
USER 0:0
ENTRYPOINT ["/usr/local/bin/gpuform"]
CMD ["agent"]
