import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { asAdmin as admin, call } from './helpers/client';
import { countryId, genreId, importStations, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';

async function newGenre(name: string) {
  const res = await admin('POST', '/api/v1/admin/genres', { name, description: `${name} music` });
  return res.body.data.id as number;
}

function channelBody(overrides: Record<string, unknown> = {}) {
  const id = crypto.randomUUID().slice(0, 8);
  return {
    name: `Admin FM ${id}`,
    stream_url: `https://admin.example/${id}.aac`,
    format: 'aac',
    country_code: 'fr',
    ...overrides,
  };
}

describe('POST /api/v1/admin/radios', () => {
  it('creates a channel and answers its RadioResource', async () => {
    const genre = await newGenre('Admin Jazz');
    const res = await admin(
      'POST',
      '/api/v1/admin/radios',
      channelBody({
        name: 'Radio Café Zürich',
        description: 'Un café, du jazz',
        stream_url: 'https://admin.example/cafe.aac',
        logo: 'https://admin.example/logo.png',
        language: 'FR',
        bitrate: 96,
        is_featured: true,
        social_links: { website: 'https://cafe.example/', instagram: 'https://instagram.com/cafe' },
        genre_ids: [genre, genre],
        play_count: 1_000_000,
        likes: 5,
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.message).toBe('Radio channel created.');
    expect(res.body.data).toMatchObject({
      name: 'Radio Café Zürich',
      slug: 'radio-cafe-zurich',
      description: 'Un café, du jazz',
      stream_url: 'https://admin.example/cafe.aac',
      logo: 'https://admin.example/logo.png',
      country: { id: await countryId('FR'), name: 'France', code: 'FR' },
      language: 'fr',
      bitrate: 96,
      format: 'aac',
      is_featured: true,
      play_count: 0,
      likes: 0,
      genres: [{ id: genre, name: 'Admin Jazz' }],
      social_links: {
        website: 'https://cafe.example/',
        facebook: null,
        twitter: null,
        instagram: 'https://instagram.com/cafe',
      },
      is_liked: false,
      is_favorited: false,
    });
    const user = await registerUser();
    const found = await call('GET', '/api/v1/radios?search=cafe zurich', { token: user.token });
    expect(found.body.data.map((r: { id: number }) => r.id)).toEqual([res.body.data.id]);
  });

  it('lists every failing field', async () => {
    const res = await admin('POST', '/api/v1/admin/radios', {
      stream_url: 'ftp://x',
      format: 'wma',
      language: 'zz',
      bitrate: -1,
    });
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({
      name: ['The name field is required.'],
      stream_url: ['The stream url field must be a valid URL.'],
      language: ['The language field must be an ISO 639-1 code (such as en).'],
      bitrate: ['The bitrate field must be at least 0.'],
      format: ['The format field must be one of: mp3, aac, aac+, ogg, opus, flac, hls.'],
      country_id: ['The country id or country code field is required.'],
    });
  });

  it('422 for an unknown country or genre, a taken stream URL or slug', async () => {
    const taken = channelBody();
    expect((await admin('POST', '/api/v1/admin/radios', taken)).status).toBe(201);
    const res = await admin(
      'POST',
      '/api/v1/admin/radios',
      channelBody({
        stream_url: taken.stream_url,
        country_id: 999_999,
        country_code: undefined,
        genre_ids: [888_888],
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({
      country_id: ['The selected country does not exist.'],
      genre_ids: ['These genres do not exist: 888888.'],
      stream_url: ['The stream url has already been taken.'],
    });
    const slug = await admin('POST', '/api/v1/admin/radios', channelBody({ slug: 'unique-slug-a' }));
    expect(slug.status).toBe(201);
    const again = await admin('POST', '/api/v1/admin/radios', channelBody({ slug: 'unique-slug-a' }));
    expect(again.body.data.errors).toEqual({ slug: ['The slug has already been taken.'] });
  });

  it('401 without a token, 403 with a user token', async () => {
    const user = await registerUser();
    expect((await call('POST', '/api/v1/admin/radios', { json: channelBody() })).status).toBe(401);
    expect((await call('POST', '/api/v1/admin/radios', { token: user.token, json: channelBody() })).status).toBe(403);
  });
});

describe('PATCH /api/v1/admin/radios/{id}', () => {
  it('changes only the given fields, genres replaced', async () => {
    const [rock, pop] = [await newGenre('Patch Rock'), await newGenre('Patch Pop')];
    const created = (
      await admin('POST', '/api/v1/admin/radios', channelBody({ name: 'Before', genre_ids: [rock], bitrate: 64 }))
    ).body.data;
    const res = await admin('PATCH', `/api/v1/admin/radios/${created.id}`, {
      name: 'After',
      genre_ids: [pop],
      social_links: { twitter: 'https://x.com/after' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: created.id,
      name: 'After',
      slug: created.slug,
      bitrate: 64,
      stream_url: created.stream_url,
      genres: [{ id: pop, name: 'Patch Pop' }],
      social_links: { twitter: 'https://x.com/after', website: null },
    });
    const user = await registerUser();
    expect(
      (await call('GET', '/api/v1/radios?search=after', { token: user.token })).body.data.map(
        (r: { id: number }) => r.id,
      ),
    ).toContain(created.id);
    expect((await call('GET', '/api/v1/radios?search=before', { token: user.token })).body.data).toEqual([]);
  });

  it('deactivating hides the channel everywhere; reactivating brings it back', async () => {
    const user = await registerUser();
    const genre = await newGenre('Hideable');
    const created = (
      await admin(
        'POST',
        '/api/v1/admin/radios',
        channelBody({ name: 'Now You See Me', genre_ids: [genre], is_featured: true, country_code: 'IS' }),
      )
    ).body.data;
    const iceland = await countryId('IS');
    expect((await call('GET', `/api/v1/radios?country_id=${iceland}`, { token: user.token })).body.meta.total).toBe(1);

    const off = await admin('PATCH', `/api/v1/admin/radios/${created.id}`, { is_active: false });
    expect(off.status).toBe(200);
    expect((await call('GET', `/api/v1/radios/${created.id}`, { token: user.token })).status).toBe(404);
    const listed = await call('GET', `/api/v1/radios?country_id=${iceland}`, { token: user.token });
    expect(listed.body.data).toEqual([]);
    expect(listed.body.meta.total).toBe(0);
    expect((await call('GET', '/api/v1/radios?search=see me', { token: user.token })).body.data).toEqual([]);
    expect(
      (await call('GET', '/api/v1/radios/featured?limit=50', { token: user.token })).body.data.map(
        (r: { id: number }) => r.id,
      ),
    ).not.toContain(created.id);
    expect((await call('GET', `/api/v1/genres/${genre}`)).body.data.radio_channels).toEqual([]);

    await admin('PATCH', `/api/v1/admin/radios/${created.id}`, { is_active: true });
    expect((await call('GET', `/api/v1/radios/${created.id}`, { token: user.token })).status).toBe(200);
  });

  it('404 for a missing channel, 422 for bad fields', async () => {
    expect((await admin('PATCH', '/api/v1/admin/radios/999999', { name: 'x' })).body.message).toBe(
      'Radio channel not found.',
    );
    const created = (await admin('POST', '/api/v1/admin/radios', channelBody())).body.data;
    const res = await admin('PATCH', `/api/v1/admin/radios/${created.id}`, {
      name: '',
      logo: 'not a url',
      is_active: 'yes',
    });
    expect(res.body.data.errors).toEqual({
      name: ['The name field may not be empty.'],
      logo: ['The logo field must be a valid URL.'],
      is_active: ['The is active field must be true or false.'],
    });
  });
});

describe('admin genres', () => {
  it('creates, renames and deactivates a genre', async () => {
    const created = await admin('POST', '/api/v1/admin/genres', {
      name: 'Vaporwave',
      logo: 'https://img.example/v.png',
      id: 5,
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      name: 'Vaporwave',
      slug: 'vaporwave',
      logo: 'https://img.example/v.png',
      description: '',
      is_active: true,
    });
    const id = created.body.data.id;
    await importStations([station({ name: 'Genre Host' })]);
    const channel = (await env.DB.prepare("SELECT id FROM radio_channels WHERE name = 'Genre Host'").first<{
      id: number;
    }>())!.id;
    await admin('PATCH', `/api/v1/admin/radios/${channel}`, { genre_ids: [id] });

    const renamed = await admin('PATCH', `/api/v1/admin/genres/${id}`, {
      name: 'Vaporwave Classics',
      description: 'Slowed down',
    });
    expect(renamed.body.data).toMatchObject({
      id,
      name: 'Vaporwave Classics',
      slug: 'vaporwave',
      description: 'Slowed down',
    });
    const user = await registerUser();
    expect((await call('GET', `/api/v1/radios/${channel}`, { token: user.token })).body.data.genres).toEqual([
      { id, name: 'Vaporwave Classics' },
    ]);

    await admin('PATCH', `/api/v1/admin/genres/${id}`, { is_active: false });
    expect((await call('GET', '/api/v1/genres')).body.data.map((g: { id: number }) => g.id)).not.toContain(id);
    expect((await call('GET', `/api/v1/radios/${channel}`, { token: user.token })).body.data.genres).toEqual([]);
    expect((await call('GET', `/api/v1/radios?genre_id=${id}`, { token: user.token })).body.meta.total).toBe(0);
  });

  it('422 for a taken slug or a missing name, 404 for a missing genre', async () => {
    await admin('POST', '/api/v1/admin/genres', { name: 'Taken' });
    expect((await admin('POST', '/api/v1/admin/genres', { name: 'Taken' })).body.data.errors).toEqual({
      slug: ['The slug has already been taken.'],
    });
    expect((await admin('POST', '/api/v1/admin/genres', {})).body.data.errors).toEqual({
      name: ['The name field is required.'],
    });
    expect((await admin('PATCH', '/api/v1/admin/genres/999999', { name: 'x' })).status).toBe(404);
    expect(await genreId('taken')).toBeGreaterThan(0);
  });
});
