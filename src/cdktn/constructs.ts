/**
 * The generated `cdktn` bindings with the conveniences CDK users expect:
 * local paths packaged as assets, synth-time checks by the provider's own
 * validation (attribute paths in Terraform names), and no API key in the
 * synthesized JSON.
 * Props, getters and Terraform names are exactly the generated ones.
 *
 * @module
 */
import * as cdktn from "cdktn";
import type { Construct } from "constructs";
import {
  provider,
  provisioner,
  sandboxReader,
  secret,
  snapshot,
  template,
  volume,
} from "../gen/cdktn";
import {
  addProviderValidation,
  apiKeyProblems,
  packageCopySources,
  packageFileSources,
  proxyPasswordProblems,
  registryPasswordProblems,
  secretValueProblems,
  type ValidatedConstruct,
} from "../cdk/conveniences";
import type { CdkRuntime } from "../cdk/runtime";
import { buildWithListRuns, commandsWithJoinedRuns, type WithRunLines } from "../cdk/run-lines";

const RUNTIME: CdkRuntime = cdktn;

/** A Template build step; its `run` is a shell line or a list of lines (joined with " && "). */
export type TemplateBuildSteps = WithRunLines<template.TemplateBuildSteps>;
/** A Template's `build`, its steps' `run` in either form. */
export type TemplateBuild = Omit<template.TemplateBuild, "steps"> & {
  /** The build steps, in order. */
  readonly steps?: TemplateBuildSteps[] | cdktn.IResolvable;
};
/** The Template's props, its steps' `run` in either form. */
export type TemplateConfig = Omit<template.TemplateConfig, "buildAttribute"> & {
  /** What to build (`build` in Terraform). */
  readonly buildAttribute: TemplateBuild;
};
/** A Provisioner setup command; its `run` is a shell line or a list of lines (joined with " && "). */
export type ProvisionerCommands = WithRunLines<provisioner.ProvisionerCommands>;
/** The Provisioner's props, its commands' `run` in either form. */
export type ProvisionerConfig = Omit<provisioner.ProvisionerConfig, "commands"> & {
  /** Setup commands, run in order after the upload. */
  readonly commands?: ProvisionerCommands[] | cdktn.IResolvable;
};

/**
 * The `sandboxiac` provider block. With no arguments the provider reads
 * `E2B_API_URL`, `E2B_SANDBOX_URL`, `E2B_DOMAIN` and `E2B_API_KEY` from the
 * environment terraform runs in. A literal `apiKey` fails synth validation
 * (it would be written in clear into `cdk.tf.json`). Set `E2B_API_KEY` in the
 * environment: a sensitive `TerraformVariable` is accepted, but terraform
 * writes variable values in clear into saved plan files (`terraform plan -out`).
 */
export class SandboxiacProvider extends provider.SandboxiacProvider {
  /** Declares the provider block; every argument is optional. */
  public constructor(scope: Construct, id: string, config: provider.SandboxiacProviderConfig = {}) {
    super(scope, id, config);
    this.node.addValidation({ validate: () => apiKeyProblems(this.apiKey, RUNTIME) });
  }
}

/**
 * A template (`sandboxiac_template`). Local paths (the build's `context`, else
 * each COPY step's `src`/`sources`) are relative to the directory of
 * `cdktf.json` (else the working directory); they are copied into the stack as
 * assets so `terraform apply` finds them. A registry password must be
 * late-bound (a sensitive `TerraformVariable`): a literal fails synth
 * validation, since it would be written in clear into `cdk.tf.json`.
 */
export class Template extends template.Template {
  private buildProblems: readonly string[] = [];

  /** Declares the template; invalid literal props fail synth validation. */
  public constructor(scope: Construct, id: string, config: TemplateConfig) {
    super(scope, id, {
      ...config,
      buildAttribute: buildWithListRuns(config.buildAttribute, RUNTIME) as template.TemplateBuild,
    });
    this.putBuildAttribute(config.buildAttribute);
    addProviderValidation(
      this,
      config,
      () => this.synthesizeAttributes(),
      RUNTIME,
      () => this.buildProblems,
    );
  }

  /** Sets `build`, packaging its local files as assets and checking the registry password. */
  public override putBuildAttribute(value: TemplateBuild): void {
    const listed = buildWithListRuns(value, RUNTIME) as template.TemplateBuild;
    const packaged = packageCopySources(this, listed, RUNTIME);
    this.buildProblems = [...packaged.problems, ...registryPasswordProblems(listed, RUNTIME)];
    super.putBuildAttribute(packaged.value);
  }
}

/**
 * The local `files[].source` paths of a construct with a `files` block
 * (Provisioner, Volume): each packaged as an asset, and the paths that could
 * not be packaged reported by the construct's synth validation.
 */
class LocalFiles {
  private problems: readonly string[] = [];

  /**
   * Registers `construct`'s synth validation, which includes the packaging
   * problems and the construct's `extra` ones.
   */
  public constructor(
    private readonly construct: ValidatedConstruct,
    config: object,
    attributes: () => Record<string, unknown>,
    extra: () => readonly string[] = () => [],
  ) {
    addProviderValidation(construct, config, attributes, RUNTIME, () => [
      ...this.problems,
      ...extra(),
    ]);
  }

  /** `files` with each local `source` replaced by its asset's path. */
  public packaged<T>(files: T): T {
    const packaged = packageFileSources(this.construct, files, RUNTIME);
    this.problems = packaged.problems;
    return packaged.value;
  }
}

/**
 * A provisioner (`sandboxiac_provisioner`). A `files[].source` is a local path,
 * relative to the directory of `cdktf.json` (else the working directory); it is
 * copied into the stack as an asset so `terraform apply` finds it. A literal
 * `network.egressProxy.password` fails synth validation (it would be written
 * in clear into `cdk.tf.json`).
 */
export class Provisioner extends provisioner.Provisioner {
  private readonly localFiles: LocalFiles;

  /** Declares the provisioner; invalid literal props fail synth validation. */
  public constructor(scope: Construct, id: string, config: ProvisionerConfig) {
    const { commands, ...rest } = config;
    super(scope, id, rest);
    this.localFiles = new LocalFiles(
      this,
      config,
      () => this.synthesizeAttributes(),
      () => proxyPasswordProblems(config.network, RUNTIME),
    );
    if (commands !== undefined) this.putCommands(commands);
    if (config.files !== undefined) this.putFiles(config.files);
  }

  /** Sets `files`, packaging each local `source` as an asset. */
  public override putFiles(value: provisioner.ProvisionerFiles[] | cdktn.IResolvable): void {
    super.putFiles(this.localFiles.packaged(value));
  }

  /** Sets `commands`; a `run` list is handed to the binding as its joined line. */
  public override putCommands(
    value: ProvisionerCommands[] | provisioner.ProvisionerCommands[] | cdktn.IResolvable,
  ): void {
    super.putCommands(
      commandsWithJoinedRuns(value, RUNTIME) as
        provisioner.ProvisionerCommands[] | cdktn.IResolvable,
    );
  }
}

/** A snapshot (`sandboxiac_snapshot`); invalid literal props fail synth validation. */
export class Snapshot extends snapshot.Snapshot {
  /** Declares the snapshot. */
  public constructor(scope: Construct, id: string, config: snapshot.SnapshotConfig) {
    super(scope, id, config);
    addProviderValidation(this, config, () => this.synthesizeAttributes(), RUNTIME);
  }
}

/**
 * A sandbox reader (`sandboxiac_sandbox_reader`); invalid literal props fail
 * synth validation.
 */
export class SandboxReader extends sandboxReader.SandboxReader {
  /** Declares the reader. */
  public constructor(scope: Construct, id: string, config: sandboxReader.SandboxReaderConfig) {
    super(scope, id, config);
    addProviderValidation(this, config, () => this.synthesizeAttributes(), RUNTIME);
  }
}

/**
 * A persistent volume (`sandboxiac_volume`). A `files[].source` is a local
 * path, relative to the directory of `cdktf.json` (else the working directory);
 * it is copied into the stack as an asset so `terraform apply` finds it.
 */
export class Volume extends volume.Volume {
  private readonly localFiles: LocalFiles;

  /** Declares the volume; invalid literal props fail synth validation. */
  public constructor(scope: Construct, id: string, config: volume.VolumeConfig) {
    super(scope, id, config);
    this.localFiles = new LocalFiles(this, config, () => this.synthesizeAttributes());
    if (config.files !== undefined) this.putFiles(config.files);
  }

  /** Sets `files`, packaging each local `source` as an asset. */
  public override putFiles(value: volume.VolumeFiles[] | cdktn.IResolvable): void {
    super.putFiles(this.localFiles.packaged(value));
  }
}

/**
 * A secret (`sandboxiac_secret`). Its `value` must be late-bound (a sensitive
 * `TerraformVariable`): a literal fails synth validation, since it would be
 * written in clear into `cdk.tf.json`.
 */
export class Secret extends secret.Secret {
  /** Declares the secret; invalid literal props fail synth validation. */
  public constructor(scope: Construct, id: string, config: secret.SecretConfig) {
    super(scope, id, config);
    addProviderValidation(
      this,
      config,
      () => this.synthesizeAttributes(),
      RUNTIME,
      () => secretValueProblems(config.value, RUNTIME),
    );
  }
}
