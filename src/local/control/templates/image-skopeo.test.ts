import { parseImageRef, type ImageRef } from "./image-ref";
import { classifySkopeoFailure } from "./image-skopeo";

/** `ref` parsed; the test's refs are valid. */
function ref(text: string): ImageRef {
  const parsed = parseImageRef(text);
  if (typeof parsed === "string") throw new Error(`${text}: ${parsed}`);
  return parsed;
}

/** skopeo 1.9.3's stderr line for a fatal error, as it prints it (msg quoted, inner quotes escaped). */
function fatal(msg: string): string {
  return `time="2026-11-27T07:51:44Z" level=fatal msg="${msg.replace(/"/g, '\\"')}"\n`;
}

function classify(text: string, stderr: string, credentialsGiven = false) {
  return classifySkopeoFailure(stderr, { ref: ref(text), secrets: [], credentialsGiven });
}

// Every stderr below was printed by skopeo 1.9.3 against Debian's docker-registry 2.8.2 on
// loopback (port 45401 open, 45402 behind htpasswd), unless its test says otherwise.
describe("classifySkopeoFailure()", () => {
  it.each([
    [
      "inspect",
      'Error parsing image name "docker://127.0.0.1:45401/tests/nope:v1": reading manifest v1 in 127.0.0.1:45401/tests/nope: manifest unknown: manifest unknown',
    ],
    [
      "copy",
      "initializing source docker://127.0.0.1:45401/tests/nope:v1: reading manifest v1 in 127.0.0.1:45401/tests/nope: manifest unknown: manifest unknown",
    ],
  ])("says a missing image does not exist on a registry whose port holds 401 (%s)", (_, msg) => {
    const err = classify("127.0.0.1:45401/tests/nope:v1", fatal(msg));
    expect(err.kind).toBe("not_found");
    expect(err.message).toBe(
      `image 127.0.0.1:45401/tests/nope:v1 does not exist in registry 127.0.0.1:45401: ${msg}: check the name and tag`,
    );
  });

  it("says a missing image does not exist when its name and tag spell unauthorized, 401 and denied", () => {
    const err = classify(
      "127.0.0.1:45401/tests/unauthorized-401:denied",
      fatal(
        'Error parsing image name "docker://127.0.0.1:45401/tests/unauthorized-401:denied": reading manifest denied in 127.0.0.1:45401/tests/unauthorized-401: manifest unknown: manifest unknown',
      ),
    );
    expect(err.kind).toBe("not_found");
  });

  it("says a missing digest does not exist when the digest holds 401", () => {
    const digest = `sha256:401${"0".repeat(58)}404`;
    const err = classify(
      `127.0.0.1:45401/tests/nope@${digest}`,
      fatal(
        `Error parsing image name "docker://127.0.0.1:45401/tests/nope@${digest}": reading manifest ${digest} in 127.0.0.1:45401/tests/nope: manifest unknown: manifest unknown`,
      ),
    );
    expect(err.kind).toBe("not_found");
  });

  it("names authentication and the credentials to check when given credentials are refused", () => {
    const err = classify(
      "127.0.0.1:45402/private/busy:v1",
      fatal(
        'Error parsing image name "docker://127.0.0.1:45402/private/busy:v1": reading manifest v1 in 127.0.0.1:45402/private/busy: unauthorized: authentication required',
      ),
      true,
    );
    expect(err.kind).toBe("auth");
    expect(err.message).toMatch(
      /^authentication to registry 127\.0\.0\.1:45402 failed for image 127\.0\.0\.1:45402\/private\/busy:v1: .*: check the username and password of fromImage/,
    );
  });

  it("says an image refused without credentials may not exist or be private", () => {
    const err = classify(
      "127.0.0.1:45402/tests/nope:v1",
      fatal(
        "initializing source docker://127.0.0.1:45402/tests/nope:v1: reading manifest v1 in 127.0.0.1:45402/tests/nope: unauthorized: authentication required",
      ),
    );
    expect(err.kind).toBe("auth");
    expect(err.message).toMatch(
      /^registry 127\.0\.0\.1:45402 refused image 127\.0\.0\.1:45402\/tests\/nope:v1, and no credentials were given with fromImage\(\): .*: the image does not exist, or it is private: check the name and tag; for a private image pass fromImage\(ref, \{ username, password \}\)/,
    );
  });

  it("says Docker Hub's refusal of an unknown name without credentials may be a missing image", () => {
    // Docker Hub's answer to an anonymous pull of a name it does not have, in containers/image's words.
    const err = classify(
      "nosuchuser/nope",
      fatal(
        'Error parsing image name "docker://nosuchuser/nope:latest": reading manifest latest in docker.io/nosuchuser/nope: requested access to the resource is denied',
      ),
    );
    expect(err.kind).toBe("auth");
    expect(err.message).toContain("the image does not exist, or it is private");
  });

  it("takes the registry's 'manifest unknown' over an 'unauthorized' beside it", () => {
    const err = classify(
      "127.0.0.1:5000/tests/nope:v1",
      fatal(
        "reading manifest v1 in 127.0.0.1:5000/tests/nope: errors:\nmanifest unknown: manifest unknown\nunauthorized: authentication required\n",
      ),
    );
    expect(err.kind).toBe("not_found");
  });

  it.each([
    ["StatusCode: 401, <html>", "auth"],
    ["invalid status code from registry 403 (Forbidden)", "auth"],
    ["StatusCode: 404, 404 page not found", "not_found"],
    ["invalid status code returned when fetching blob 404 (Not Found)", "not_found"],
  ])("reads the HTTP status of %j as skopeo prints it", (answer, kind) => {
    const err = classify(
      "127.0.0.1:5000/tests/busy:v1",
      fatal(`reading manifest v1 in 127.0.0.1:5000/tests/busy: ${answer}`),
    );
    expect(err.kind).toBe(kind);
  });

  it("says a plain-HTTP registry whose port holds 401 speaks plain HTTP", () => {
    const err = classify(
      "127.0.0.1:45401/tests/nope:v1",
      fatal(
        'Error parsing image name "docker://127.0.0.1:45401/tests/nope:v1": pinging container registry 127.0.0.1:45401: Get "https://127.0.0.1:45401/v2/": http: server gave HTTP response to HTTPS client',
      ),
    );
    expect(err.kind).toBe("unreachable");
    expect(err.message).toContain("registry 127.0.0.1:45401 speaks plain HTTP");
  });

  it("says a registry with nothing listening cannot be reached", () => {
    const err = classify(
      "127.0.0.1:9/tests/busy:v1",
      fatal(
        'initializing source docker://127.0.0.1:9/tests/busy:v1: pinging container registry 127.0.0.1:9: Get "http://127.0.0.1:9/v2/": dial tcp 127.0.0.1:9: connect: connection refused',
      ),
    );
    expect(err.kind).toBe("unreachable");
    expect(err.message).toContain("registry 127.0.0.1:9 cannot be reached to pull");
  });

  it("does not take a local 'permission denied' for a registry's refusal", () => {
    // Go's wording of EACCES while skopeo writes the OCI layout.
    const err = classify(
      "127.0.0.1:5000/tests/busy:v1",
      fatal("writing blob: open /srv/pull/oci/blobs/sha256/4010: permission denied"),
    );
    expect(err.kind).toBe("other");
  });

  it("never shows the password skopeo printed", () => {
    const err = classifySkopeoFailure(
      fatal("reading manifest v1 in 127.0.0.1:5000/tests/busy: bad pw-secret-1 here"),
      {
        ref: ref("127.0.0.1:5000/tests/busy:v1"),
        secrets: ["pw-secret-1"],
        credentialsGiven: true,
      },
    );
    expect(err.message).not.toContain("pw-secret-1");
    expect(err.message).toContain("***");
  });
});
