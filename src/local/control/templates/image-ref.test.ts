import { isLoopbackRegistry, parseImageRef } from "./image-ref";

describe("parseImageRef()", () => {
  it.each([
    ["python:3.12", "docker.io/library/python:3.12"],
    ["e2bdev/base", "docker.io/e2bdev/base:latest"],
    ["ubuntu", "docker.io/library/ubuntu:latest"],
    ["oven/bun:1.1", "docker.io/oven/bun:1.1"],
    ["index.docker.io/library/debian:12", "docker.io/library/debian:12"],
    ["ghcr.io/org/app", "ghcr.io/org/app:latest"],
    ["localhost/app:dev", "localhost/app:dev"],
    ["127.0.0.1:5000/tests/busy:v1", "127.0.0.1:5000/tests/busy:v1"],
    [`alpine@sha256:${"a".repeat(64)}`, `docker.io/library/alpine@sha256:${"a".repeat(64)}`],
  ])("resolves %s as Docker does, to %s", (ref, full) => {
    expect(parseImageRef(ref)).toMatchObject({ full });
  });

  it.each([[""], ["Python:3"], ["python:"], ["app@sha256:12"], ["a//b"]])(
    "refuses %j with what a reference looks like",
    (ref) => {
      expect(typeof parseImageRef(ref)).toBe("string");
    },
  );
});

describe("isLoopbackRegistry()", () => {
  it.each([
    ["localhost:5000", true],
    ["127.0.0.1:5000", true],
    ["127.8.9.10", true],
    ["[::1]:5000", true],
    ["docker.io", false],
    ["10.0.0.1:5000", false],
    ["127.0.0.1.evil.example:5000", false],
  ])("%s is loopback: %s", (registry, expected) => {
    expect(isLoopbackRegistry(registry)).toBe(expected);
  });
});
