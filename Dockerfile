# syntax=docker/dockerfile:1
#
# stickyvm: one image with both daemons, as the manifests expect
# (manifests/Kustomization, image stickyvm/stickyvm):
#   /usr/local/bin/stickyvm-scheduler   (Deployment stickyvm-scheduler)
#   /usr/local/bin/stickyvm-apiserver   (Deployment stickyvm-apiserver)
# and the kubectl plugin, for copying out of the image:
#   /usr/local/bin/kubectl-stickyvm     (docker cp, or COPY --from=...)
#
#   docker build -t registry.example.com/stickyvm:v0.1.0 .
#
# The entrypoint is stickyvm-apiserver, so manifests/apiserver/'s Deployment
# (args only) runs as written; the scheduler's Deployment names its binary
# with `command:` (and kustomize sets both, see manifests/Kustomization).
# Runs as the numeric non-root user 65532 (the Deployments also set
# runAsNonRoot, a read-only root filesystem and drop every capability;
# neither daemon writes to disk).

# ---- build: Debian bookworm's toolchain and -dev packages (scripts/deps.sh)
FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config \
      libcurl4-openssl-dev libwebsockets-dev libcjson-dev libssl-dev libyaml-dev \
      libcmocka-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Only the two daemons and the kubectl plugin; tests, the emulator and
# benchmarks are not built (CMake still wants cmocka to configure the test
# targets).
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
 && cmake --build /build -j"$(nproc)" --target stickyvm-scheduler stickyvm-apiserver kubectl-stickyvm \
 && strip --strip-debug /build/stickyvm-scheduler /build/stickyvm-apiserver /build/kubectl-stickyvm

# ---- runtime: only the shared libraries the binaries link (the cluster CA
# comes from the ServiceAccount mount, no system CA bundle is needed)
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcurl4 libwebsockets17 libcjson1 libssl3 libyaml-0-2 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/stickyvm-scheduler /build/stickyvm-apiserver /build/kubectl-stickyvm /usr/local/bin/
USER 65532:65532
EXPOSE 10259 8443
ENTRYPOINT ["/usr/local/bin/stickyvm-apiserver"]
