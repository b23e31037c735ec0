/**
 * A SidecarSet author's regular expression (`resourcesPolicy.targetContainersNameRegex`) as
 * OpenKruise runs it, with Go's `regexp` (pkg/webhook/sidecarset/validating, regexp.Compile;
 * pkg/control/sidecarcontrol, MatchString): RE2's syntax, so the same patterns are accepted and
 * refused, and RE2's matching, in time linear in the text. re2js is a port of RE2. JavaScript's
 * RegExp backtracks: `^(a+)+$` against a container named with thirty `a`s and a `!` held a
 * webhook's event loop for minutes, and mutating admission sees names before pod validation does.
 */
import { RE2JS } from 're2js';

export interface GoRegexp {
  /** Go's MatchString: the pattern anywhere in `text`. */
  readonly matches: (text: string) => boolean;
}

/** The compiled pattern, or Go's error message for it (`error parsing regexp: …`). */
export function compileGoRegexp(pattern: string): GoRegexp | { readonly error: string } {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
  return { matches: (text) => compiled.matcher(text).find() };
}
