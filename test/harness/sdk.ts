/**
 * Loads the Pulumi SDK modules the harness needs from the program's own
 * `@pulumi/pulumi` copy.
 *
 * The runner, the program and the gRPC stubs must share ONE SDK instance: a
 * second copy would make `setMocks` patch a module the program never sees
 * (docs/pulumi-provider.md#engine-harness, gotcha 5), and `Struct` objects from another
 * `google-protobuf` fail identity checks. So nothing here is imported
 * statically; every module is resolved from the program directory at run time.
 *
 * @module
 */
import { createRequire } from "node:module";
import * as path from "node:path";
import type * as pulumiModule from "@pulumi/pulumi";
import type * as grpcModule from "@grpc/grpc-js";
import type * as providerPb from "@pulumi/pulumi/proto/provider_pb";
import type * as resourcePb from "@pulumi/pulumi/proto/resource_pb";
import type * as structPb from "google-protobuf/google/protobuf/struct_pb";

/** The SDK modules of one program directory. */
export interface Sdk {
  /** Absolute directory of the `@pulumi/pulumi` package in use. */
  dir: string;
  pulumi: typeof pulumiModule;
  grpc: typeof grpcModule;
  providerPb: typeof providerPb;
  resourcePb: typeof resourcePb;
  structPb: typeof structPb;
  /** `ResourceProviderClient` from `proto/provider_grpc_pb` (untyped upstream). */
  providerGrpc: { ResourceProviderClient: new (address: string, credentials: unknown) => unknown };
  /** `runtime/settings`: internal, but the documented seam for the monitor and RPC draining. */
  settings: {
    getMonitor(): unknown;
    waitForRPCs(): Promise<void>;
  };
}

/** Resolves the `@pulumi/pulumi` package directory the program at `programDir` would load. */
function sdkDir(programDir: string): string {
  return path.dirname(require.resolve("@pulumi/pulumi/package.json", { paths: [programDir] }));
}

/** Path of the dynamic-provider plugin entry of the program's SDK copy. */
export function dynamicProviderEntry(programDir: string): string {
  return require.resolve("@pulumi/pulumi/cmd/dynamic-provider", { paths: [programDir] });
}

/** Loads the SDK modules of the program at `programDir`. */
export function loadSdk(programDir: string): Sdk {
  const dir = sdkDir(programDir);
  // Loads from the SDK's own directory, as the plugin does: grpc-js and google-protobuf included.
  const fromSdk = createRequire(path.join(dir, "package.json"));
  return {
    dir,
    pulumi: fromSdk(dir) as typeof pulumiModule,
    grpc: fromSdk("@grpc/grpc-js") as typeof grpcModule,
    providerPb: fromSdk("./proto/provider_pb") as typeof providerPb,
    resourcePb: fromSdk("./proto/resource_pb") as typeof resourcePb,
    structPb: fromSdk("google-protobuf/google/protobuf/struct_pb") as typeof structPb,
    providerGrpc: fromSdk("./proto/provider_grpc_pb") as Sdk["providerGrpc"],
    settings: fromSdk("./runtime/settings") as Sdk["settings"],
  };
}
