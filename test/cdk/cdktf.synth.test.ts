/** Synth tests of `sandbox-iac/cdktf` (cdktf 0.21); see support/synth-suite.ts. */
import * as cdktf from "cdktf";
import "cdktf/lib/testing/adapters/jest";
import * as bindings from "../../src/cdktf";
import { describeSynth } from "./support/synth-suite";
import type { CdkFlavour } from "./support/synth-stacks";

// The suite is typed with cdktn's classes; cdktf's have the same shape.
describeSynth({ name: "cdktf", lib: cdktf, bindings } as unknown as CdkFlavour);
