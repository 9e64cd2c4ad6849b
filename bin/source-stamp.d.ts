export declare const SRC: string;
export declare const BUILD: string;
export declare function sourceStamp(): { digest: string; entries: number };
export declare function buildIsFresh(): boolean;
export declare function ourModule(name: string): Promise<string>;
export declare function installed(): boolean;
export declare function contentDigest(path: string): string;
