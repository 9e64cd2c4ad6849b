import { join, relative, resolve, sep } from 'node:path';

/**
 * A stripped scenario's relative imports, made to name build/'s modules from where it now lies
 * (scripts/build.mjs): one of src/ names its build/ module; a scenario module (.ts) names its stripped
 * copy; anything else (a JSON file, a module outside both) names the original file, which the build
 * does not copy. `dirs`: the source's and the copy's folders, src/ and its build, scenarios/ and theirs.
 */
export function relink(code, dirs) {
  const inside = (dir, path) => !relative(dir, path).startsWith('..');
  const js = (path) => path.replace(/\.ts$/, '.js');
  return code.replace(/((?:from|import)\s*\(?\s*)"(\.\.?\/[^"\n]*)"/g, (_, lead, specifier) => {
    const path = resolve(dirs.sourceDir, specifier);
    const linked = inside(dirs.src, path)
      ? js(join(dirs.builtSrc, relative(dirs.src, path)))
      : inside(dirs.scenarios, path) && path.endsWith('.ts')
        ? js(join(dirs.builtScenarios, relative(dirs.scenarios, path)))
        : path;
    const named = relative(dirs.targetDir, linked).split(sep).join('/');
    return `${lead}"${named.startsWith('.') ? named : `./${named}`}"`;
  });
}
