/** The cdktn-basic example synthesized with cdktn and applied with terraform; see support/e2e-suite.ts. */
import { describeEndToEnd } from "./support/e2e-suite";

describeEndToEnd("cdktn");
