// Chromium decodes multiopus (5.1, 7.1) but does not list it among the codecs it answers with,
// so it rejects an offer of it. The usual way round: answer the offer as if it were stereo
// Opus on the same payload type, then give the answer back the offer's multiopus line and
// its fmtp; the decoder is made from the local description. (Used by Tests/WebRTC/viewer.html
// and Tests/GStreamer/webrtc_page.html; GStreamer writes the codec's name in capitals.)
const multiopus = (sdp) => sdp.match(/^a=rtpmap:(\d+) multiopus\/48000\/(\d+)\r?$/im);

export function surroundAsStereo(offer) {
  const codec = multiopus(offer.sdp);
  if (!codec) return offer;
  const sdp = offer.sdp.replace(codec[0], `a=rtpmap:${codec[1]} opus/48000/2`)
    .replace(new RegExp(`^a=fmtp:${codec[1]} .*$`, "m"), `a=fmtp:${codec[1]} minptime=10;useinbandfec=1`);
  return { type: offer.type, sdp };
}

export function surroundAnswer(answer, offer) {
  const codec = multiopus(offer.sdp);
  if (!codec) return answer;
  const fmtp = offer.sdp.match(new RegExp(`^a=fmtp:${codec[1]} .*$`, "m"));
  const sdp = answer.sdp.replace(new RegExp(`^a=rtpmap:${codec[1]} opus/48000/2\r?$`, "m"), codec[0])
    .replace(new RegExp(`^a=fmtp:${codec[1]} .*$`, "m"), fmtp ? fmtp[0] : "");
  return { type: answer.type, sdp };
}

export const isSurround = (offer) => multiopus(offer.sdp) !== null;
