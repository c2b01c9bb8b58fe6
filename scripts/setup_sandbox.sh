#!/usr/bin/env bash
# Filled by the sandbox work: builds the cached Python rootfs image for the docker backend.
exit 0
