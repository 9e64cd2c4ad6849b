// Types of scenario-hooks.js (JavaScript, so that Node's hooks thread loads it from src/ as from build/).
export declare const STRIP_QUERY: string;
export declare function useNativeStripping(native: boolean, entry?: string): void;
export declare function candidates(specifier: string): string[];
export declare function stripTypes(code: string, path: string): string;
export declare const syncHooks: object;
export declare function initialize(data?: { native?: boolean; entry?: string }): Promise<void>;
