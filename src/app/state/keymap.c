/* keymap.c: what a key press means in the current state: the one table of
 * keys, shared by the window and the tests. Keys are characters or APP_KEY_*
 * (state.h), so no SDL is needed here; window.c maps SDL's keycodes to them. */
#include <string.h>

#include "state_internal.h"
#include "teach.h"

/* Every key the table below gives a meaning, in some state or with some modifier
   (test_state checks that no mapped key is missing here and that each one here is
   mapped; the soak and the fuzzer press them). */
static const int mapped[] = {APP_KEY_UP,
                             APP_KEY_DOWN,
                             APP_KEY_LEFT,
                             APP_KEY_RIGHT,
                             APP_KEY_TAB,
                             APP_KEY_RETURN,
                             APP_KEY_ESCAPE,
                             APP_KEY_BACKSPACE,
                             APP_KEY_PAGEUP,
                             APP_KEY_PAGEDOWN,
                             APP_KEY_F1,
                             APP_KEY_F11,
                             APP_KEY_HOME,
                             APP_KEY_END,
                             APP_KEY_DELETE,
                             'q',
                             '=',
                             '+',
                             '-',
                             '0',
                             's',
                             'u',
                             'v',
                             '?',
                             '/',
                             'r',
                             'm',
                             't',
                             'c',
                             'n',
                             'p',
                             'e',
                             '[',
                             ']',
                             'w',
                             'x',
                             'd',
                             'k',
                             ',',
                             '.',
                             'i',
                             'l',
                             'y',
                             'o',
                             'b',
                             '1',
                             '2',
                             '3',
                             '4',
                             '5',
                             '6',
                             '7',
                             '8',
                             '9',
                             'g',
                             'h',
                             'j'}; /* Space, F5 and A mean something only while a lesson runs
                                      or records (teach.c's app_teach_key) */

const int *app_keys(int *count) {
    *count = (int)(sizeof mapped / sizeof mapped[0]);
    return mapped;
}

static app_action edit_key(int key, int ctrl);
static app_action ctrl_key(int key, int shift);

app_action app_key_action(const app_state *s, int key, int mods) {
    app_action a = {.kind = ACT_NONE};
    const int ctrl = (mods & APP_MOD_CTRL) != 0, shift = (mods & APP_MOD_SHIFT) != 0;
    if (key >= 'A' && key <= 'Z') key += 'a' - 'A';
    if (s->editing) return edit_key(key, ctrl); /* other keys arrive as typed text */
    if (app_write_on(s) && key) { /* a loaded model writes: any key stops it, and only that */
        a.kind = ctrl && key == 'q' ? ACT_QUIT : ACT_WRITE_STOP;
        return a;
    }
    if (s->menu && key == APP_KEY_ESCAPE && !ctrl) { /* Escape closes the "More" panel first */
        a.kind = ACT_MENU;
        return a;
    }
    if (s->train_mode && s->look.present && !s->help && key == APP_KEY_ESCAPE && !ctrl) {
        a.kind = ACT_PRESENT; /* training's presentation closes before training mode does */
        return a;
    }
    if (s->help) { /* keys behind the help overlay only close it (Ctrl+Q still quits) */
        a.kind = ctrl && key == 'q' ? ACT_QUIT : (key ? ACT_HELP : ACT_NONE); /* closes it alone:
                                        Escape would also leave training mode or a lesson */
        return a;
    }
    if (app_teach_key(s, key, mods, &a)) return a; /* a lesson's keys, while it runs */
    if (ctrl) return ctrl_key(key, shift);
    if (key == 'h' && s->train_mode) { /* training mode's sweep of h (sweep_view.c) */
        a.kind = ACT_TRAIN_SWEEP;
        return a;
    }
    switch (key) {
    case APP_KEY_UP: a.kind = ACT_H_UP; break;
    case APP_KEY_DOWN: a.kind = ACT_H_DOWN; break;
    case APP_KEY_RIGHT: a.kind = ACT_D_UP; break;
    case APP_KEY_LEFT: a.kind = ACT_D_DOWN; break;
    case APP_KEY_TAB: a.kind = shift ? ACT_SAMPLE_PREV : ACT_SAMPLE_NEXT; break;
    case APP_KEY_RETURN: a.kind = ACT_EDIT_START; break;
    case APP_KEY_PAGEUP: a.kind = shift ? ACT_PINNED_PAGE_PREV : ACT_PAGE_PREV; break;
    case APP_KEY_PAGEDOWN: a.kind = shift ? ACT_PINNED_PAGE_NEXT : ACT_PAGE_NEXT; break;
    case APP_KEY_F1:
    case '?': a.kind = ACT_HELP; break;
    case '/':
        if (shift) a.kind = ACT_HELP;
        break;
    case APP_KEY_F11: a.kind = ACT_FULLSCREEN; break;
    case APP_KEY_ESCAPE: a.kind = ACT_ESCAPE; break;
    case 'r': a.kind = ACT_SEED; break;
    case 'm': a.kind = ACT_MASK; break;
    case 't': a.kind = ACT_THEME; break;
    case 'c': a.kind = ACT_CMAP; break;
    case 'n': a.kind = ACT_SCALE; break;
    case 'p': a.kind = ACT_PRESENT; break;
    case 'e': a.kind = ACT_PAD; break;
    case '[': a.kind = ACT_TEMP_DOWN; break;
    case ']': a.kind = ACT_TEMP_UP; break;
    case 'w': a.kind = s->gpt ? ACT_WRITE : ACT_WEIGHTS; break; /* a loaded model writes */
    case 'x': a.kind = shift ? ACT_ABLATE_CLEAR : ACT_ABLATE; break;
    case 'j': a.kind = shift ? ACT_KV_MORE : ACT_KV_FEWER; break;
    case 'd': a.kind = ACT_DIFF; break;
    case 'v': a.kind = ACT_VALUES; break;
    case 'k': a.kind = ACT_CONTRAST; break;
    case ',': a.kind = ACT_STEP_PREV; break;
    case '.': a.kind = ACT_STEP_NEXT; break;
    case 'i': a.kind = ACT_LESSON; break;
    case 'l': a.kind = ACT_TRAIN; break;
    case 'y': a.kind = ACT_TRAIN_LAYER, a.arg = shift ? -1 : 1; break;
    case 'o': a.kind = ACT_OVERVIEW; break;
    case 's': /* Ctrl+S saves (above) */
        a.kind = s->gpt && !s->train_mode ? ACT_WRITE_PACE : ACT_TRAIN_SPEED;
        break;
    case 'b': a.kind = ACT_COMPARE; break;
    case APP_KEY_END: a.kind = ACT_REPLAY_LIVE; break; /* training mode's replay */
    case 'h': a.kind = ACT_HEAD_VIEW; break;
    default:
        if (key >= '1' && key <= '9') {
            a.kind = ACT_FOCUS;
            a.arg = key - '0';
        }
    }
    return a;
}

/* A key in the text field: its editing keys (Ctrl+V: the window pastes). */
static app_action edit_key(int key, int ctrl) {
    app_action a = {.kind = ACT_NONE};
    switch (key) {
    case APP_KEY_RETURN: a.kind = ACT_EDIT_APPLY; break;
    case APP_KEY_ESCAPE: a.kind = ACT_EDIT_CANCEL; break;
    case APP_KEY_BACKSPACE: a.kind = ACT_EDIT_BACKSPACE; break;
    case APP_KEY_DELETE: a.kind = ACT_EDIT_DELETE; break;
    case APP_KEY_LEFT: a.kind = ACT_EDIT_LEFT, a.arg = ctrl; break;
    case APP_KEY_RIGHT: a.kind = ACT_EDIT_RIGHT, a.arg = ctrl; break;
    case APP_KEY_HOME: a.kind = ACT_EDIT_HOME; break;
    case APP_KEY_END: a.kind = ACT_EDIT_END; break;
    case 'u': a.kind = ctrl ? ACT_EDIT_CLEAR : ACT_NONE; break;
    case 'o': a.kind = ctrl ? ACT_EDIT_OPEN : ACT_NONE; break;
    case 'v': a.kind = ctrl ? ACT_EDIT_INSERT : ACT_NONE; break;
    }
    return a;
}

/* A key with Ctrl held (outside the text field): quit, zoom, the saves. */
static app_action ctrl_key(int key, int shift) {
    app_action a = {.kind = ACT_NONE};
    if (key == 'q')
        a.kind = ACT_QUIT;
    else if (key == '=' || key == '+')
        a.kind = ACT_ZOOM_IN;
    else if (key == '-')
        a.kind = ACT_ZOOM_OUT;
    else if (key == '0')
        a.kind = ACT_ZOOM_RESET;
    else if (key == 's')
        a.kind = shift ? ACT_SAVE_PANEL : ACT_SAVE;
    else if (key == 'v' && shift)
        a.kind = ACT_SAVE_VIEW_FILE;
    return a;
}

/* --- the "More" panel: a button for every key the header has none for ---------- */

/* One button of the panel: the key press it sends and its labels, one per value of
   the setting it names ("Numbers: off (V)", "Numbers: on (V)"), or one for an action. */
typedef struct {
    int key, mods;
    const char *label[4];
} menu_def;

#define SHIFT_ APP_MOD_SHIFT
#define CTRL_ APP_MOD_CTRL
static const menu_def attention_menu[] = {
    {APP_KEY_PAGEUP, 0, {"Page \xE2\x97\x80 (PgUp)"}},
    {APP_KEY_PAGEDOWN, 0, {"Page \xE2\x96\xB6 (PgDn)"}},
    {APP_KEY_PAGEUP, SHIFT_, {"Pinned page \xE2\x97\x80 (Shift+PgUp)"}},
    {APP_KEY_PAGEDOWN, SHIFT_, {"Pinned page \xE2\x96\xB6 (Shift+PgDn)"}},
    {'h', 0, {"Head view (H)"}},
    {'e', 0, {"Padding: off (E)", "Padding: on (E)"}},
    {'[', 0, {"Temperature \xE2\x88\x92 ([)"}},
    {']', 0, {"Temperature + (])"}},
    {'w', 0, {"Weights: random (W)", "Weights: designed (W)"}},
    {'s', 0, {"Writing pace (S)"}}, /* a loaded model's only */
    {'x', 0, {"Focused head off (X)"}},
    {'x', SHIFT_, {"Every head on (Shift+X)"}},
    {'j', 0, {"Fewer K/V heads (J)"}},
    {'j', SHIFT_, {"More K/V heads (Shift+J)"}},
    {'d', 0, {"Difference: off (D)", "Difference: on (D)"}},
    {'v', 0, {"Numbers: off (V)", "Numbers: on (V)"}},
    {'k', 0, {"Contrast: 0 to 1 (K)", "Contrast: row max (K)", "Contrast: log (K)"}},
    {',', 0, {"Stage back (,)"}},
    {'.', 0, {"Stage on (.)"}},
    {'i', 0, {"Panels: off (I)", "Panels: on (I)"}},
    {'b', 0, {"Compare: off (B)", "Compare: on (B)"}},
    {'l', 0, {"Learn live (L)"}},
    {'p', 0, {"Presentation (P)"}},
    {APP_KEY_F11, 0, {"Fullscreen (F11)"}},
    {'0', CTRL_, {"Zoom as at start (Ctrl+0)"}},
    {'s', CTRL_ | SHIFT_, {"Save the panel (Ctrl+Shift+S)"}},
    {'v', CTRL_ | SHIFT_, {"Save a view file (Ctrl+Shift+V)"}},
    {APP_KEY_ESCAPE, 0, {"Close what is open (Esc)"}},
    {'q', CTRL_, {"Quit (Ctrl+Q)"}},
};
static const menu_def training_menu[] = {
    {'l', 0, {"Pause (L)", "Go on (L)"}},
    {'s', 0, {"Speed: full (S)", "Speed: slow (S)", "Speed: paused (S)", "Speed: class pace (S)"}},
    {'.', 0, {"One step (.)"}},
    {'y', 0, {"Next layer (Y)"}},
    {'r', 0, {"New seed (R)"}},
    {'h', 0, {"Sweep of h (H)"}},
    {'[', 0, {"Moment back ([)"}},
    {']', 0, {"Moment on (])"}},
    {APP_KEY_END, 0, {"Live again (End)"}},
    {APP_KEY_TAB, 0, {"Next task (Tab)"}},
    {APP_KEY_TAB, SHIFT_, {"Previous task (Shift+Tab)"}},
    {APP_KEY_UP, 0, {"h up, new run (Up)"}},
    {APP_KEY_DOWN, 0, {"h down, new run (Down)"}},
    {APP_KEY_RIGHT, 0, {"d_model up, new run (Right)"}},
    {APP_KEY_LEFT, 0, {"d_model down, new run (Left)"}},
    {APP_KEY_PAGEUP, 0, {"Page \xE2\x97\x80 (PgUp)"}},
    {APP_KEY_PAGEDOWN, 0, {"Page \xE2\x96\xB6 (PgDn)"}},
    {'v', 0, {"Numbers: off (V)", "Numbers: on (V)"}},
    {'k', 0, {"Contrast: 0 to 1 (K)", "Contrast: row max (K)", "Contrast: log (K)"}},
    {'p', 0, {"Presentation (P)"}},
    {APP_KEY_F11, 0, {"Fullscreen (F11)"}},
    {'0', CTRL_, {"Zoom as at start (Ctrl+0)"}},
    {'v', CTRL_ | SHIFT_, {"Save a view file (Ctrl+Shift+V)"}},
    {APP_KEY_ESCAPE, 0, {"Back to attention (Esc)"}},
    {'q', CTRL_, {"Quit (Ctrl+Q)"}},
};
#undef SHIFT_
#undef CTRL_

/* Which label of d is the state's now (0 for an action's only one). */
static int menu_shown(const app_state *s, const view_state *vs, const menu_def *d) {
    const attn_layer *L = vs->layer;
    switch (d->mods ? 0 : d->key) {
    case 'e': return L && L->n_real < L->n;
    case 'w': return s->cfg.weights == MHA_WEIGHTS_PATTERNS;
    case 'd': return s->look.diff != 0;
    case 'v': return s->look.values != 0;
    case 'k': return s->look.contrast >= 0 && s->look.contrast <= 2 ? s->look.contrast : 0;
    case 'i': return s->lesson != 0;
    case 'b': return s->pin != NULL;
    case 'l': return vs->train && !vs->train->running;
    case 's':
        return vs->train ? (!vs->train->running   ? 2
                            : vs->train->rate < 0 ? 3
                                                  : vs->train->rate > 0)
                         : 0;
    default: return 0;
    }
}

/* The panel's buttons for the mode shown (a loaded model: without the keys it
   refuses), into vs->menu_items. */
void app_menu_view(const app_state *s, view_state *vs) {
    const int training = vs->train != NULL;
    const menu_def *defs = training ? training_menu : attention_menu;
    const int n = training ? (int)(sizeof training_menu / sizeof training_menu[0])
                           : (int)(sizeof attention_menu / sizeof attention_menu[0]);
    vs->menu = s->menu;
    vs->menu_count = 0;
    for (int i = 0; i < n && vs->menu_count < VIEW_MENU_MAX; i++) {
        const menu_def *d = &defs[i];
        if (s->gpt && !d->mods && d->key > 0 && d->key < 128 && strchr("ew[]b", d->key)) continue;
        if (!s->gpt && !training && d->key == 's' && !d->mods) continue; /* the writing's pace */
        view_menu_item *it = &vs->menu_items[vs->menu_count++];
        it->key = d->key;
        it->mods = d->mods;
        for (int k = 0; k < 4; k++) it->label[k] = d->label[k];
        it->shown = menu_shown(s, vs, d);
    }
}
