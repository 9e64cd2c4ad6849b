import type { ArgumentsCamelCase, InferredOptionTypes } from 'yargs';
import { InputError } from '../api/input-error.ts';
import type { INIT_FLAGS, TYPES_FLAGS } from './types-flags.ts';

export type TypesArgs = ArgumentsCamelCase<InferredOptionTypes<typeof TYPES_FLAGS>>;
export type InitArgs = ArgumentsCamelCase<InferredOptionTypes<typeof INIT_FLAGS>>;

/** What `types` writes: from which document, to where, with the `Api` line or not. */
export interface TypesConfig {
  /** As given (the file's header repeats it); undefined for our own document. */
  spec: string | undefined;
  /** As given; undefined for stdout. */
  out: string | undefined;
  apiType: boolean;
}

export interface InitConfig {
  spec: string | undefined;
  name: string;
}

const TYPESCRIPT_FILE = /\.[cm]?ts$/;
/** A scenario's name is its file's: letters, digits, `-` and `_`. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export function resolveTypesConfig(args: TypesArgs): TypesConfig {
  if (args.out !== undefined && !TYPESCRIPT_FILE.test(args.out))
    throw new InputError(`--out must name a TypeScript file (.ts), got '${args.out}'`);
  return { spec: args.spec, out: args.out, apiType: args.apiType };
}

export function resolveInitConfig(args: InitArgs): InitConfig {
  if (!NAME.test(args.name))
    throw new InputError(`--name must be letters, digits, '-' or '_' (a file name), got '${args.name}'`);
  return { spec: args.spec, name: args.name };
}
