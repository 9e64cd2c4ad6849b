export declare function relink(
  code: string,
  dirs: {
    sourceDir: string;
    targetDir: string;
    src: string;
    builtSrc: string;
    scenarios: string;
    builtScenarios: string;
  },
): string;
