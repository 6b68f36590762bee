// The app's icons, drawn inline (no icon font, no other host). Decorative: every control that shows one has a text
// name of its own.
const paths = {
  play: 'M8 5v14l11-7z',
  pause: 'M6 5h4v14H6zM14 5h4v14h-4z',
  heart:
    'M12 20.6l-1.4-1.3C5.4 14.6 2 11.6 2 7.9 2 4.9 4.4 2.5 7.4 2.5c1.7 0 3.4.8 4.6 2.1 1.2-1.3 2.9-2.1 4.6-2.1 3 0 5.4 2.4 5.4 5.4 0 3.7-3.4 6.7-8.6 11.4z',
  star: 'M12 17.3l6.2 3.7-1.6-7 5.4-4.7-7.1-.6L12 2 9.1 8.7 2 9.3l5.4 4.7-1.6 7z',
  home: 'M10 20v-6h4v6h5v-8h3L12 3 2 12h3v8z',
  search:
    'M15.5 14h-.8l-.3-.3A6.5 6.5 0 1 0 9.5 16a6.5 6.5 0 0 0 4.2-1.6l.3.3v.8l5 5 1.5-1.5zm-6 0a4.5 4.5 0 1 1 0-9 4.5 4.5 0 0 1 0 9z',
  browse: 'M4 4h7v7H4zM13 4h7v7h-7zM4 13h7v7H4zM13 13h7v7h-7z',
  library: 'M3 5h2v15H3zM7 3h2v17H7zM11.5 4.6l1.9-.7 5.6 15.2-1.9.7z',
  user: 'M12 12a4.5 4.5 0 1 0 0-9 4.5 4.5 0 0 0 0 9zm0 2c-3.3 0-9 1.7-9 5v2h18v-2c0-3.3-5.7-5-9-5z',
  up: 'M7.4 15.4L12 10.8l4.6 4.6L18 14l-6-6-6 6z',
  down: 'M7.4 8.6L12 13.2l4.6-4.6L18 10l-6 6-6-6z',
  close: 'M19 6.4L17.6 5 12 10.6 6.4 5 5 6.4 10.6 12 5 17.6 6.4 19 12 13.4 17.6 19 19 17.6 13.4 12z',
  add: 'M19 13h-6v6h-2v-6H5v-2h6V5h2v6h6z',
} as const;

export type IconName = keyof typeof paths;

export function Icon({ name, outline = false }: { name: IconName; outline?: boolean }) {
  return (
    <svg class={outline ? 'icon outline' : 'icon'} viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path d={paths[name]} />
    </svg>
  );
}
