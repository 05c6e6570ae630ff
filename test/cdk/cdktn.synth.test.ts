/** Synth tests of `sandbox-iac/cdktn` (CDK Terrain); see support/synth-suite.ts. */
import * as cdktn from "cdktn";
import "cdktn/lib/testing/adapters/jest";
import * as bindings from "../../src/cdktn";
import { describeSynth } from "./support/synth-suite";

describeSynth({ name: "cdktn", lib: cdktn, bindings });
