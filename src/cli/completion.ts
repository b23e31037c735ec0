/**
 * `sidecarset completion bash|zsh`: a shell completion script generated from the commander
 * program itself, so that every command, flag and choice the CLI has is completed and none that
 * it lacks.
 */
import type { Command, Option } from 'commander';

export const SHELLS = ['bash', 'zsh'] as const;
export type Shell = (typeof SHELLS)[number];

interface FlagInfo {
  names: string[];
  description: string;
  /** Takes a value: its choices, or [] for a free value (a path, a number). */
  values?: readonly string[];
}

interface CommandInfo {
  name: string;
  description: string;
  flags: FlagInfo[];
  /** Choices of the first positional argument, if it has any. */
  argument?: readonly string[];
  /** Its own commands (`rollout status`, ...), completed after it. */
  subcommands: CommandInfo[];
}

export function completionScript(program: Command, shell: Shell): string {
  const name = program.name();
  const commands = program.commands.map(describeCommand);
  return shell === 'bash' ? bashScript(name, commands) : zshScript(name, commands);
}

function describeCommand(command: Command): CommandInfo {
  const help = command.createHelp();
  const flags = help.visibleOptions(command).map(describeFlag);
  const argument = command.registeredArguments[0]?.argChoices;
  return {
    name: command.name(),
    description: command.description(),
    flags,
    ...(argument === undefined ? {} : { argument }),
    subcommands: command.commands.map(describeCommand),
  };
}

function describeFlag(option: Option): FlagInfo {
  const names = [option.short, option.long].filter((n): n is string => n !== undefined);
  // An optional value (`--controller [bool]`) is completed as a plain flag.
  const values = option.required ? (option.argChoices ?? []) : undefined;
  return { names, description: option.description, ...(values === undefined ? {} : { values }) };
}

function bashScript(name: string, commands: readonly CommandInfo[]): string {
  const fn = `_${name.replace(/\W/g, '_')}`;
  return `# bash completion for ${name}: source it, or install it as
# /usr/share/bash-completion/completions/${name}
${fn}() {
  local cur prev cmd sub i j
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmd=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      -*) ;;
      *) cmd="\${COMP_WORDS[i]}"; break ;;
    esac
  done
  case "$cmd" in
    "")
      COMPREPLY=($(compgen -W "${commands.map((c) => c.name).join(' ')} -h --help -V --version" -- "$cur"))
      ;;
${commands.map((c) => bashCase(c, '    ')).join('\n')}
  esac
}
# With no reply (a flag that takes a path), bash completes file names.
complete -o default -F ${fn} ${name}
`;
}

/** The case arm of one command; a command with commands of its own finds which one first. */
function bashCase(c: CommandInfo, indent: string): string {
  if (c.subcommands.length > 0) {
    return [
      `${indent}${c.name})`,
      `${indent}  sub=""`,
      `${indent}  for ((j = i + 1; j < COMP_CWORD; j++)); do`,
      `${indent}    case "\${COMP_WORDS[j]}" in`,
      `${indent}      -*) ;;`,
      `${indent}      *) sub="\${COMP_WORDS[j]}"; break ;;`,
      `${indent}    esac`,
      `${indent}  done`,
      `${indent}  case "$sub" in`,
      `${indent}    "")`,
      `${indent}      COMPREPLY=($(compgen -W "${c.subcommands.map((s) => s.name).join(' ')} -h --help" -- "$cur"))`,
      `${indent}      ;;`,
      ...c.subcommands.map((s) => bashCase(s, `${indent}    `)),
      `${indent}  esac`,
      `${indent}  ;;`,
    ].join('\n');
  }
  const valueCases = c.flags
    .filter((f) => f.values !== undefined)
    .map((f) => {
      const reply =
        f.values !== undefined && f.values.length > 0
          ? `COMPREPLY=($(compgen -W "${f.values.join(' ')}" -- "$cur"))`
          : 'COMPREPLY=()';
      return `${indent}    ${f.names.join('|')}) ${reply}; return ;;`;
    });
  const words = [...c.flags.flatMap((f) => f.names), ...(c.argument ?? [])].join(' ');
  return [
    `${indent}${c.name})`,
    ...(valueCases.length > 0
      ? [`${indent}  case "$prev" in`, ...valueCases, `${indent}  esac`]
      : []),
    `${indent}  COMPREPLY=($(compgen -W "${words}" -- "$cur"))`,
    `${indent}  ;;`,
  ].join('\n');
}

function zshScript(name: string, commands: readonly CommandInfo[]): string {
  const fn = `_${name.replace(/\W/g, '_')}`;
  return `#compdef ${name}
# zsh completion for ${name}: source it, or save it as _${name} in a directory of $fpath
${fn}() {
${zshDispatch(name, commands, '  ')}
}
if [[ \${funcstack[1]} == ${fn} ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${name}
fi
`;
}

/**
 * Completes a command word among `commands`, or, past it, that command's flags (or its own
 * commands, the same way one level down).
 */
function zshDispatch(what: string, commands: readonly CommandInfo[], indent: string): string {
  // _describe splits an item at its first colon; only _arguments specs need [ ] : escaped.
  const list = commands.map((c) => `${indent}  '${c.name}:${zshQuote(c.description)}'`);
  const cases = commands.map((c) => {
    if (c.subcommands.length > 0) {
      return [
        `${indent}  ${c.name})`,
        zshDispatch(`${what} ${c.name}`, c.subcommands, `${indent}    `),
        `${indent}    ;;`,
      ].join('\n');
    }
    const specs = c.flags.map((f) => `${indent}      ${zshFlagSpec(f)}`);
    if (c.argument !== undefined)
      specs.push(`${indent}      '1:argument:(${c.argument.join(' ')})'`);
    return [
      `${indent}  ${c.name})`,
      `${indent}    _arguments -s \\`,
      specs.join(' \\\n'),
      `${indent}    ;;`,
    ].join('\n');
  });
  return [
    `${indent}local -a commands`,
    `${indent}commands=(`,
    ...list,
    `${indent})`,
    `${indent}if (( CURRENT == 2 )); then`,
    `${indent}  _describe -t commands '${what} command' commands`,
    `${indent}  return`,
    `${indent}fi`,
    `${indent}local cmd=\${words[2]}`,
    `${indent}shift words`,
    `${indent}(( CURRENT-- ))`,
    `${indent}case $cmd in`,
    ...cases,
    `${indent}esac`,
  ].join('\n');
}

function zshFlagSpec(flag: FlagInfo): string {
  const description = `[${zshEscape(flag.description)}]`;
  const value =
    flag.values === undefined
      ? ''
      : flag.values.length > 0
        ? `:value:(${flag.values.join(' ')})`
        : ':value:_files';
  if (flag.names.length === 1) return `'${flag.names[0] ?? ''}${description}${value}'`;
  const group = `(${flag.names.join(' ')})`;
  return `'${group}'{${flag.names.join(',')}}'${description}${value}'`;
}

/** Inside single quotes. */
function zshQuote(text: string): string {
  return text.replace(/'/g, `'\\''`);
}

/** Inside single quotes, in an _arguments spec: brackets and colons escaped too. */
function zshEscape(text: string): string {
  return zshQuote(text).replace(/([[\]:])/g, '\\$1');
}
