// snappyjs ships no types: the two functions remote write needs (the snappy block format).
declare module 'snappyjs' {
  export function compress<T extends Uint8Array | ArrayBuffer>(uncompressed: T): T;
  export function uncompress<T extends Uint8Array | ArrayBuffer>(compressed: T, maxLength?: number): T;
}
